"""Themes in Pi's JSON format (themes.md): built-in ``dark`` and ``light``, user files in ``<agentDir>/themes``,
paths from the ``themes`` setting and ``--theme``, and project ``.pi/themes`` once the project is trusted.

``discover_themes`` finds and validates them (problems become diagnostics, never exceptions) and
``choose_theme`` applies the ``theme`` setting or ``--use-theme`` (``light/dark`` pairs, ``system``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from pi_core.errors import PiError
from pi_core.resources.colors import (
    RGB,
    ColorError,
    is_literal,
    parse_color,
    xterm_to_rgb,
)

if TYPE_CHECKING:
    from os import PathLike

REQUIRED_COLORS: tuple[str, ...] = (
    "accent", "border", "borderAccent", "borderMuted", "success", "error", "warning", "muted", "dim", "text",
    "thinkingText", "selectedBg", "userMessageBg", "userMessageText", "customMessageBg", "customMessageText",
    "customMessageLabel", "toolPendingBg", "toolSuccessBg", "toolErrorBg", "toolTitle", "toolOutput", "mdHeading",
    "mdLink", "mdLinkUrl", "mdCode", "mdCodeBlock", "mdCodeBlockBorder", "mdQuote", "mdQuoteBorder", "mdHr",
    "mdListBullet", "toolDiffAdded", "toolDiffRemoved", "toolDiffContext", "syntaxComment", "syntaxKeyword",
    "syntaxFunction", "syntaxVariable", "syntaxString", "syntaxNumber", "syntaxType", "syntaxOperator",
    "syntaxPunctuation", "thinkingOff", "thinkingMinimal", "thinkingLow", "thinkingMedium", "thinkingHigh",
    "thinkingXhigh", "bashMode",
)
# Optional roles and the role each falls back to.
OPTIONAL_COLORS: dict[str, str] = {
    "scrollbarTrack": "muted", "scrollbarThumb": "text", "searchMatchBg": "selectedBg", "searchMatchText": "text",
    "thinkingMax": "thinkingXhigh",
}
EXPORT_KEYS = ("pageBg", "cardBg", "infoBg")
TOP_LEVEL_KEYS = frozenset({"$schema", "name", "appearance", "vars", "colors", "export"})
BUILTIN_NAMES = ("dark", "light")
SYSTEM = "system"


class ThemeError(PiError):
    """A theme file that cannot be used; the message names the file and what is wrong."""


@dataclass(frozen=True)
class Theme:
    name: str
    appearance: str  # "dark" or "light"
    colors: dict[str, str]  # role -> "#rrggbb", or "" for the terminal's own default colour
    export: dict[str, str] = field(default_factory=dict)
    path: Path | None = None  # None for a built-in theme

    def color(self, role: str) -> str:
        return self.colors.get(role, "")

    def concrete(self, role: str) -> str:
        """The role's colour where a real value is needed (HTML): terminal defaults become black or white."""
        value = self.colors.get(role, "")
        if value:
            return value
        background = role.endswith("Bg")
        dark = self.appearance == "dark"
        return ("#000000" if dark else "#ffffff") if background else ("#e5e5e5" if dark else "#1a1a1a")

    def export_colors(self) -> dict[str, str]:
        """CSS variables for the HTML export: every role plus the page, card and info backgrounds."""
        css = {role: self.concrete(role) for role in self.colors}
        derived = _derived_export_backgrounds(parse_color(self.concrete("userMessageBg")))
        for key, fallback in zip(EXPORT_KEYS, derived):
            css["export" + key[0].upper() + key[1:]] = self.export.get(key) or fallback
        return css


def _derived_export_backgrounds(base: RGB) -> tuple[str, str, str]:
    def scaled(factor: float) -> str:
        return RGB(*(min(255, max(0, round(c * factor))) for c in (base.r, base.g, base.b))).hex

    if base.luminance() > 0.5:
        return scaled(0.96), base.hex, RGB(min(255, base.r + 10), min(255, base.g + 5), max(0, base.b - 20)).hex
    return scaled(0.7), scaled(0.85), RGB(min(255, base.r + 20), min(255, base.g + 15), base.b).hex


def _resolve(value: Any, variables: Mapping[str, Any], where: str, seen: tuple[str, ...] = ()) -> str:
    """A colour value to ``#rrggbb`` or ``""``, following variable references."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise ThemeError(f"{where}: expected a colour string or a 0-255 index, got {json.dumps(value)}")
    if isinstance(value, int):
        try:
            return xterm_to_rgb(value).hex
        except ColorError as err:
            raise ThemeError(f"{where}: {err}") from None
    if value == "":
        return ""
    if is_literal(value):
        try:
            return parse_color(value).hex
        except ColorError as err:
            raise ThemeError(f"{where}: {err}") from None
    if value in seen:
        raise ThemeError(f"{where}: circular variable reference {' -> '.join([*seen, value])}")
    if value not in variables:
        raise ThemeError(f"{where}: unknown variable {value!r} (not in \"vars\")")
    return _resolve(variables[value], variables, where, (*seen, value))


def _appearance_of(colors: Mapping[str, str]) -> str:
    background = colors.get("userMessageBg") or ""
    if background:
        return "light" if parse_color(background).luminance() > 0.5 else "dark"
    text = colors.get("text") or ""
    return "dark" if not text or parse_color(text).luminance() > 0.5 else "light"


def parse_theme(data: Any, source: str, path: Path | None = None) -> Theme:  # open: a theme file, JSON
    """Validate a theme object (Pi's theme.schema.json rules) and resolve its colours."""
    if not isinstance(data, dict):
        raise ThemeError(f"Invalid theme {source}: expected a JSON object")
    unknown = sorted(set(data) - TOP_LEVEL_KEYS)
    if unknown:
        raise ThemeError(f"Invalid theme {source}: unknown top-level field(s) {', '.join(unknown)}")
    name = data.get("name")
    if not isinstance(name, str) or not name:
        raise ThemeError(f'Invalid theme {source}: "name" must be a non-empty string')
    if "/" in name:
        raise ThemeError(f'Invalid theme {source}: the name "{name}" contains "/", which is reserved for light/dark pairs')
    if name == SYSTEM:
        raise ThemeError(f'Invalid theme {source}: "system" is a reserved theme name')
    appearance = data.get("appearance")
    if appearance is not None and appearance not in ("dark", "light"):
        raise ThemeError(f'Invalid theme {source}: "appearance" must be "dark" or "light"')
    variables = data.get("vars", {})
    colors = data.get("colors")
    export = data.get("export", {})
    for key, value in (("vars", variables), ("colors", colors), ("export", export)):
        if not isinstance(value, dict):
            raise ThemeError(f'Invalid theme {source}: "{key}" must be an object')
    assert isinstance(colors, dict) and isinstance(variables, dict) and isinstance(export, dict)
    missing = [role for role in REQUIRED_COLORS if role not in colors]
    if missing:
        raise ThemeError(f"Invalid theme {source}: missing colour(s) {', '.join(missing)}")
    extra = sorted(set(colors) - set(REQUIRED_COLORS) - set(OPTIONAL_COLORS))
    if extra:
        raise ThemeError(f"Invalid theme {source}: unknown colour(s) {', '.join(extra)} (define custom colours in \"vars\")")
    extra = sorted(set(export) - set(EXPORT_KEYS))
    if extra:
        raise ThemeError(f"Invalid theme {source}: unknown export field(s) {', '.join(extra)}")
    resolved = {role: _resolve(value, variables, f"{source} colors.{role}") for role, value in colors.items()}
    for role, fallback in OPTIONAL_COLORS.items():
        resolved.setdefault(role, resolved[fallback])
    exported = {key: _resolve(value, variables, f"{source} export.{key}") for key, value in export.items()}
    return Theme(name, appearance or _appearance_of(resolved), resolved, {k: v for k, v in exported.items() if v}, path)


def load_theme_file(path: Path) -> Theme:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except OSError as err:
        raise ThemeError(f"Cannot read theme {path}: {err.strerror or err}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise ThemeError(f"Failed to parse theme {path}: {err.msg} at line {err.lineno} column {err.colno}") from None
    return parse_theme(data, str(path), path)


def builtin_themes() -> dict[str, Theme]:
    folder = resources.files("pi_core.resources.builtin_themes")
    return {name: parse_theme(json.loads(folder.joinpath(f"{name}.json").read_text()), f"built-in {name}")
            for name in BUILTIN_NAMES}


@dataclass
class ThemeSet:
    themes: dict[str, Theme]
    diagnostics: list[str] = field(default_factory=list)

    def names(self) -> list[str]:
        """``system`` first, then the rest by name (the order /theme and /settings list them in)."""
        return [SYSTEM, *sorted(self.themes)]


def _theme_files(path: Path) -> list[Path]:
    if path.is_dir():
        return sorted(p for p in path.iterdir() if p.suffix == ".json" and p.is_file())
    return [path]


def discover_themes(
    agent_dir: Path,
    cwd: Path,
    *,
    cli_paths: Iterable[Path] = (),
    setting_paths: Iterable[Path] = (),
    no_themes: bool = False,
    project_trusted: Callable[[], bool],
) -> ThemeSet:
    """Every usable theme. ``project_trusted`` is asked only when ``.pi/themes`` exists.

    Sources, the first holder of a name keeping it: built-ins, ``--theme`` paths (loaded even with
    ``--no-themes``), the trusted project's ``.pi/themes``, the ``themes`` setting, ``<agentDir>/themes``.
    """
    found = ThemeSet(dict(builtin_themes()))
    sources: list[Path] = list(cli_paths)
    if not no_themes:
        project = cwd / ".pi" / "themes"
        if project.is_dir() and project_trusted():
            sources.append(project)
        sources += list(setting_paths)
        sources.append(agent_dir / "themes")
    for source in sources:
        if not source.exists():
            if source in cli_paths or source in setting_paths:
                found.diagnostics.append(f"Theme path not found: {source}")
            continue
        for file in _theme_files(source):
            try:
                theme = load_theme_file(file)
            except ThemeError as err:
                found.diagnostics.append(str(err))
                continue
            holder = found.themes.get(theme.name)
            if holder is not None:
                where = holder.path or "built-in"
                found.diagnostics.append(f'Theme "{theme.name}" in {file} ignored: the name is taken by {where}')
                continue
            found.themes[theme.name] = theme
    return found


def terminal_appearance(environ: Mapping[str, str] | None = None) -> str:
    """``dark`` or ``light`` from ``COLORFGBG`` ("15;0": light text on black); dark when unknown."""
    env = os.environ if environ is None else environ
    background = env.get("COLORFGBG", "").split(";")[-1]
    return "light" if background.isdigit() and int(background) in (7, 9, 10, 11, 12, 13, 14, 15) else "dark"


def choose_theme(setting: str | None, found: ThemeSet, appearance: str | None = None) -> tuple[Theme, str | None]:
    """The theme a ``theme`` value names, and a warning when it names none (the dark theme is used then).

    ``light/dark`` picks by the terminal's appearance; ``system`` is the built-in theme of that appearance
    (this terminal UI does not query the terminal's palette).
    """
    mode = appearance or terminal_appearance()
    name = (setting or SYSTEM).strip()
    if "/" in name:
        light, _, dark = name.partition("/")
        name = (light if mode == "light" else dark).strip()
    if name == SYSTEM:
        return found.themes[mode], None
    theme = found.themes.get(name)
    if theme is None:
        return found.themes["dark"], f'Theme "{name}" not found; using "dark". Available: {", ".join(found.names())}'
    return theme, None


def active_theme(
    cwd: Path,
    agent_dir: Path,
    setting: str | None,
    *,
    use_theme: str | None = None,
    cli_paths: Iterable[Path] = (),
    setting_paths: Iterable[Path] = (),
    no_themes: bool = False,
    project_trusted: Callable[[], bool],
) -> tuple[Theme, ThemeSet, list[str]]:
    """The theme in force (``--use-theme`` over the ``theme`` setting), every theme found, and warnings."""
    found = discover_themes(agent_dir, cwd, cli_paths=cli_paths, setting_paths=setting_paths, no_themes=no_themes,
                            project_trusted=project_trusted)
    theme, warning = choose_theme(use_theme or setting, found)
    return theme, found, [*found.diagnostics, *([warning] if warning else [])]


def setting_theme_paths(global_settings: Mapping[str, Any], project_settings: Mapping[str, Any], agent_dir: Path,  # open: settings JSON (settings.json)
                        cwd: Path) -> list[Path]:
    """The ``themes`` setting's paths: user entries resolve from the agent dir, project ones from ``.pi``."""
    paths: list[Path] = []
    for data, base in ((project_settings, cwd / ".pi"), (global_settings, agent_dir)):
        entries = data.get("themes")
        for entry in entries if isinstance(entries, list) else []:
            if isinstance(entry, str) and entry.strip():
                path = Path(entry.strip()).expanduser()
                paths.append(path if path.is_absolute() else base / path)
    return paths


class SessionDirectory(Protocol):
    """Where a session works (its ``SessionConfig``)."""

    @property
    def cwd(self) -> str | PathLike[str]: ...


class ThemedSession(Protocol):
    """What ``session_theme`` reads of a running session (``pi_core.session.AgentSession``); its ``settings``
    too, when it has them."""

    @property
    def config(self) -> SessionDirectory:
        """Relative theme paths resolve from its ``cwd``."""

    @property
    def prompt_source(self) -> object:
        """Its ``theme_paths`` (what plugins contributed), when it has them."""

    @property
    def project_trusted(self) -> bool:
        """Whether the project's themes count."""


def session_theme(session: ThemedSession, args: object = None, name: str | None = None
                  ) -> tuple[Theme, ThemeSet, list[str]]:
    """The theme a running session's front end uses: ``name``, else ``--use-theme``, else the ``theme``
    setting; found among the built-ins, ``--theme`` paths, the ``themes`` setting and what plugins contributed."""
    from pi_core.config_paths import agent_dir

    home = agent_dir()
    settings = getattr(session, "settings", None)
    cwd = Path(session.config.cwd)
    paths = setting_theme_paths(settings.scope_data("global"), settings.scope_data("project"), home, cwd) \
        if settings is not None and hasattr(settings, "scope_data") else []
    paths += [Path(p) for p in getattr(session.prompt_source, "theme_paths", None) or []]
    setting = settings.get("theme") if settings is not None else None
    return active_theme(
        cwd, home, name or setting, use_theme=None if name else getattr(args, "use_theme", None),
        cli_paths=[Path(p).expanduser() for p in getattr(args, "themes", None) or []], setting_paths=paths,
        no_themes=bool(getattr(args, "no_themes", False)), project_trusted=lambda: bool(session.project_trusted),
    )
