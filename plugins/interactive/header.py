"""The start-up header: version, key hints, the sandbox, loaded context files, plugins (and overrides), skills."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pi_plugins.interactive.footer import short_cwd


@dataclass
class StartupInfo:
    version: str = ""
    context_files: list[Path] = field(default_factory=list)
    plugins: list[str] = field(default_factory=list)  # "name (layer)": the plugins that are not built in
    builtin_plugins: list[str] = field(default_factory=list)  # the ~30 pi ships: listed only when expanded
    overrides: list[str] = field(default_factory=list)  # "tool read: myplugin overrides read"
    skills: list[str] = field(default_factory=list)
    templates: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    sandbox: str | None = None  # the active sandbox, described ("workspace-write, network off (bubblewrap)")


def startup_info(session: Any, warnings: list[str] | None = None) -> StartupInfo:
    """Gather the header from the session; ``warnings`` are the CLI's start-up warnings (``ModeRequest``)."""
    from pi_core import __version__

    info = StartupInfo(version=__version__)
    resources = session.resources
    if resources is not None:
        info.context_files = [cf.path for cf in resources.context_files]
        info.skills = [s.name for s in resources.skills]
        info.templates = [t.name for t in resources.templates]
    registry = session.registry
    plugins = registry.plugins.info.items()
    info.plugins = [f"{name} ({p.layer})" for name, p in plugins if p.layer != "builtin"]
    info.builtin_plugins = [name for name, p in plugins if p.layer == "builtin"]
    info.overrides = [f"{o.kind} {o.name}: {o.winner} overrides {o.loser}" for o in registry.overrides]
    info.warnings = list(warnings or [])
    from pi_core.toolkit.sandbox import active

    sandbox = active()
    info.sandbox = sandbox.describe() if sandbox is not None else None
    return info


EXPAND_HINT = "Press ctrl+o to show all loaded resources, the built-in plugins too."


def render_header(info: StartupInfo, cwd: Path, *, listing: bool = True, expanded: bool = False) -> Any:
    """Version and key hints, then (unless ``listing`` is off) what was loaded: context files, the plugins that are
    not built in, overrides, skills, templates. The built-in plugins only when ``expanded`` (Ctrl+O, as Pi keeps
    its loaded resources behind it); collapsed, a line says so."""
    from pi_plugins.interactive.renderers import themed
    from rich.console import Group
    from rich.text import Text

    lines: list[Any] = [Text.assemble(("pi", themed("bold cyan")), (f" v{info.version}" if info.version else "",
                                                                   themed("dim")), ("  " + short_cwd(cwd), themed("dim")))]
    lines.append(Text("esc interrupt · ctrl+c clear/quit · ctrl+o tool output · ctrl+t thinking · "
                      "/ commands · @ files · ! shell · /hotkeys", style=themed("dim")))

    def section(title: str, items: list[str], style: str = "") -> None:
        if items and listing:
            text = Text(f"{title}: ", style="bold")
            text.append(", ".join(items), style=themed(style) if style else "")
            lines.append(text)

    if info.sandbox:  # shown even when the listing is off: it says what the model's commands may do
        lines.append(Text.assemble(("Sandbox: ", "bold"), (info.sandbox, themed("green"))))
    section("Context", [short_cwd(p) for p in info.context_files], "green")
    section("Plugins", info.plugins, "cyan")
    if expanded:
        section("Built-in plugins", info.builtin_plugins, "cyan")
    elif info.builtin_plugins and listing:
        lines.append(Text(EXPAND_HINT, style=themed("dim")))
    for override in info.overrides if listing else []:
        lines.append(Text(f"  {override}", style="yellow"))
    section("Skills", info.skills, "magenta")
    section("Templates", ["/" + t for t in info.templates], "magenta")
    for warning in info.warnings:
        lines.append(Text(f"Warning: {warning}", style=themed("yellow")))
    return Group(*lines)
