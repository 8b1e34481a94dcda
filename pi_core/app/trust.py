"""Project trust (docs/config.md#project-trust): what in a folder needs a decision, the saved decisions in
``<agentDir>/trust.json``, and the order in which a run decides.

A folder's protected resources (``.pi/extensions``, ``.pi/settings.*``, ``.pi/mcp.json``, ``.pi/skills``,
``.pi/prompts``, ``.pi/themes``, ``.pi/SYSTEM.md`` / ``APPEND_SYSTEM.md``, ``.pi/packages`` from
``pi install -l``, and project ``.agents/skills``) load only once the project is trusted. The decision:
``--approve`` / ``--no-approve``; then the ``pi_project_trust`` hook of user-level and ``-e`` plugins
(first answer wins); then the saved decision for the folder or its closest ancestor (canonical paths);
then the global ``defaultProjectTrust`` (``ask``, ``always``, ``never``); ``ask`` asks when the mode has
a start-up UI and otherwise skips the resources, with one stderr line saying so.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pi_core.app.slot_record import SlotRecord
from pi_core.errors import PiError

if TYPE_CHECKING:  # the saved-decision reads (``pi --help``'s plugin flags) need neither asyncio nor plugins
    from pi_core.hookspecs.results import ProjectTrust, ProjectTrustContext
    from pi_core.registry import PluginSet
    from pi_core.ui import UI

TRUST_FILE = "trust.json"
PROJECT_PACKAGES = "packages"  # <project>/.pi/packages: where ``pi install -l`` puts distributions
_PI_ENTRIES = ("settings.json", "settings.toml", "mcp.json", "extensions", "skills", "prompts", "themes",
               "SYSTEM.md", "APPEND_SYSTEM.md", PROJECT_PACKAGES)
DEFAULT_TRUST = ("ask", "always", "never")
HOW_TO_APPROVE = "Run with --approve (-a) to load them for this run, or trust the folder in interactive pi (/trust)."
INTERACTIVE_UNTRUSTED = ("This project is not trusted. Project .pi resources and packages are ignored. "
                         "Use /trust to save a trust decision, then restart pi.")

Source = Literal["not-needed", "flag", "plugin", "saved", "default", "prompt", "no-ui"]


class TrustStoreError(PiError):
    """``trust.json`` cannot be read or written; the message names the file."""


def canonical(path: str | Path) -> str:
    """The absolute path with every symlink resolved: the key of a saved decision."""
    return os.path.realpath(os.path.abspath(os.path.expanduser(str(path))))


# --- what needs trust -----------------------------------------------------------------------------


def protected_resources(cwd: Path, home: Path | None = None) -> list[str]:
    """The protected resources found for ``cwd``, as labels (``.pi/extensions``, ``/repo/.agents/skills``).

    ``.agents/skills`` counts in ``cwd`` and its ancestors up to the git root, as the skill loader reads
    them; ``~/.agents/skills`` is the user's own and never counts. A bare ``.pi`` folder needs no trust.
    """
    from pi_core.resources.skills import ancestor_agents_skill_dirs

    root = Path(canonical(cwd))
    found = [f".pi/{entry}" for entry in _PI_ENTRIES if os.path.lexists(root / ".pi" / entry)]
    for directory in ancestor_agents_skill_dirs(root, Path(canonical(home or Path.home()))):
        if directory.is_dir():
            found.append(".agents/skills" if directory.parent.parent == root else str(directory))
    return found


# --- saved decisions ------------------------------------------------------------------------------


# Slotted records rather than dataclasses or NamedTuples: every start reads the trust decision, and importing
# ``dataclasses`` (with ``inspect``) or building a NamedTuple costs more than the reading.
class _Frozen(SlotRecord):
    """A record used as a value (hashable, as the frozen dataclasses these were)."""

    __slots__: tuple[str, ...] = ()

    def __hash__(self) -> int:  # type: ignore[override]  # SlotRecord's records are unhashable, these not
        return hash(tuple(getattr(self, name) for name in self.__slots__))


class SavedDecision(_Frozen):
    __slots__ = ("path", "trusted")

    def __init__(self, path: str, trusted: bool) -> None:
        self.path = path  # the canonical folder the decision was saved for (cwd or an ancestor)
        self.trusted = trusted


class TrustUpdate(_Frozen):
    __slots__ = ("path", "trusted")

    def __init__(self, path: str, trusted: bool | None) -> None:
        self.path = path
        self.trusted = trusted  # None removes the folder's entry


class TrustStore:
    """``<agentDir>/trust.json``: ``{"/canonical/folder": true | false}``, read and written under a lock."""

    def __init__(self, agent_dir: Path) -> None:
        self.path = Path(agent_dir) / TRUST_FILE

    def saved(self, cwd: str | Path) -> SavedDecision | None:
        """The decision saved for ``cwd`` or its closest ancestor; raises TrustStoreError on a bad file."""
        data = {canonical(key): value for key, value in self._read().items()}  # a hand-written key may be a link
        current = canonical(cwd)
        while True:
            value = data.get(current)
            if isinstance(value, bool):
                return SavedDecision(current, value)
            parent = os.path.dirname(current)
            if parent == current:
                return None
            current = parent

    def save(self, updates: Sequence[TrustUpdate]) -> None:
        from pi_core.app.settings_scope import file_lock
        from pi_core.toolkit.fileops import atomic_write

        with file_lock(self.path):
            data = self._read()
            for update in updates:
                key = canonical(update.path)
                for existing in [k for k in data if canonical(k) == key]:
                    del data[existing]
                if update.trusted is not None:
                    data[key] = update.trusted
            text = json.dumps(dict(sorted(data.items())), indent=2) + "\n"
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                atomic_write(str(self.path), text.encode("utf-8"))
            except OSError as err:
                raise TrustStoreError(f"Could not save the trust decision in {self.path}: "
                                      f"{err.strerror or err}") from err

    def _read(self) -> dict[str, bool | None]:
        try:
            text = self.path.read_text(encoding="utf-8-sig")
        except FileNotFoundError:
            return {}
        except OSError as err:
            raise TrustStoreError(f"Failed to read trust store {self.path}: {err.strerror or err}") from err
        try:
            parsed = json.loads(text)
        except ValueError as err:
            raise TrustStoreError(f"Failed to read trust store {self.path}: {err}") from err
        if not isinstance(parsed, dict):
            raise TrustStoreError(f"Invalid trust store {self.path}: expected an object")
        for key, value in parsed.items():
            if value is not None and not isinstance(value, bool):
                raise TrustStoreError(f"Invalid trust store {self.path}: value for {json.dumps(key)} must be "
                                      "true, false, or null")
        return parsed


# --- the choices a person is offered --------------------------------------------------------------


class TrustOption(_Frozen):
    __slots__ = ("label", "saved_path", "trusted", "updates")

    def __init__(self, label: str, trusted: bool, updates: tuple[TrustUpdate, ...] = (),
                 saved_path: str | None = None) -> None:
        self.label = label
        self.trusted = trusted
        self.updates = updates  # nothing saved: this run only
        self.saved_path = saved_path  # the folder whose saved decision this option sets


def trust_options(cwd: Path, *, session_only: bool) -> list[TrustOption]:
    """Trust / trust the parent folder / (this run only) / do not trust, for the prompt and ``/trust``."""
    here = canonical(cwd)
    parent = os.path.dirname(here)
    options = [TrustOption("Trust", True, (TrustUpdate(here, True),), here)]
    if parent != here:
        options.append(TrustOption(f"Trust parent folder ({parent})", True,
                                   (TrustUpdate(parent, True), TrustUpdate(here, None)), parent))
    if session_only:
        options.append(TrustOption("Trust (this session only)", True))
    options.append(TrustOption("Do not trust", False, (TrustUpdate(here, False),), here))
    if session_only:
        options.append(TrustOption("Do not trust (this session only)", False))
    return options


def prompt_title(cwd: Path, found: Sequence[str]) -> str:
    return (f"Trust project folder?\n{canonical(cwd)}\n\n"
            f"Found: {', '.join(found)}\n\n"
            "Trusting it lets pi load the folder's settings, skills, prompt templates, themes and\n"
            "packages, and run its extensions: Python code, with your permissions.")


# --- the decision ---------------------------------------------------------------------------------


class TrustDecision(_Frozen):
    """How this run decided, and what it skipped when it did not trust the project."""

    __slots__ = ("cwd", "detail", "found", "source", "trusted", "warnings")

    def __init__(self, trusted: bool, source: Source, cwd: Path, found: tuple[str, ...] = (), detail: str = "",
                 warnings: tuple[str, ...] = ()) -> None:
        self.trusted = trusted
        self.source = source
        self.cwd = cwd
        self.found = found
        self.detail = detail  # the deciding plugin, or the folder of the saved decision
        self.warnings = warnings  # not part of the decision: equality ignores them

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TrustDecision) and self._decision() == other._decision()

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(self._decision())

    def _decision(self) -> tuple[object, ...]:
        return self.trusted, self.source, self.cwd, self.found, self.detail

    @property
    def skipped(self) -> tuple[str, ...]:
        return () if self.trusted else self.found

    def skipped_line(self) -> str | None:
        """The one stderr line a mode that cannot ask prints when it skipped protected resources."""
        if not self.skipped or self.source == "flag":
            return None
        reason = {"plugin": f" (plugin {self.detail} decided)",
                  "saved": f" (saved decision for {self.detail})",
                  "default": ' (defaultProjectTrust is "never")',
                  "prompt": " (you chose not to trust it)"}.get(self.source, " yet")
        return f"Project not trusted{reason}: skipped {', '.join(self.skipped)} in {canonical(self.cwd)}. {HOW_TO_APPROVE}"


def resolve_trust(cwd: Path, agent_dir: Path, *, override: bool | None, plugins: PluginSet | None,
                  default: object, mode: str, ui: UI | None = None) -> TrustDecision:
    """Decide for this run, in the documented order; ``ui`` (a mode's start-up UI) may ask the user.

    Saving and hook problems never stop pi: they are returned as ``warnings``; a decision that cannot be
    made safely falls back to not trusting.
    """
    cwd, agent_dir = Path(cwd), Path(agent_dir)
    found = tuple(protected_resources(cwd))
    if override is not None:
        return TrustDecision(override, "flag", cwd, found)
    if not found:  # nothing to decide: no event loop, no plugin asked (the common case)
        warnings: list[str] = []
        entry = _saved(TrustStore(agent_dir), cwd, warnings)
        return TrustDecision(entry.trusted if entry else True, "not-needed", cwd, found, "", tuple(warnings))
    return _run(_resolve(cwd, agent_dir, found, plugins, default, mode, ui or stderr_ui()))


def _saved(store: TrustStore, cwd: Path, warnings: list[str]) -> SavedDecision | None:
    try:
        return store.saved(cwd)
    except TrustStoreError as err:
        warnings.append(f"{err}; saved trust decisions are ignored until it is fixed")
        return None


def _run(coro: object) -> TrustDecision:
    import asyncio

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)  # type: ignore[arg-type]
    import concurrent.futures

    with concurrent.futures.ThreadPoolExecutor(1) as pool:  # called from inside a loop (embedding)
        return pool.submit(asyncio.run, coro).result()  # type: ignore[arg-type]


async def _resolve(cwd: Path, agent_dir: Path, found: tuple[str, ...], plugins: PluginSet | None, default: object,
                   mode: str, ui: UI) -> TrustDecision:
    """The decision when the folder has protected resources: the plugins, the saved decision, the default, a
    question."""
    store = TrustStore(agent_dir)
    warnings: list[str] = []

    def decided(trusted: bool, source: Source, detail: str = "") -> TrustDecision:
        return TrustDecision(trusted, source, cwd, found, detail, tuple(warnings))

    def remember(updates: Sequence[TrustUpdate]) -> None:
        try:
            store.save(updates)
        except TrustStoreError as err:
            warnings.append(str(err))

    if plugins is not None:
        from pi_core.hookspecs.results import ProjectTrustContext

        context = ProjectTrustContext(cwd=cwd, mode=mode, ui=ui, resources=found)
        answer = await _ask_plugins(plugins, context, warnings)
        if answer is not None:
            name, verdict = answer
            if verdict.remember:
                remember([TrustUpdate(str(cwd), verdict.trusted)])
            return decided(verdict.trusted, "plugin", name)
    entry = _saved(store, cwd, warnings)
    if entry is not None:
        return decided(entry.trusted, "saved", entry.path)
    if default == "always":
        return decided(True, "default")
    if default == "never":
        return decided(False, "default")
    if not ui.has_ui:
        return decided(False, "no-ui")
    options = trust_options(cwd, session_only=True)
    chosen = await ui.select(prompt_title(cwd, found), [o.label for o in options])
    option = next((o for o in options if o.label == chosen), None)
    if option is None:
        return decided(False, "prompt")
    if option.updates:
        remember(option.updates)
    return decided(option.trusted, "prompt")


async def _ask_plugins(plugins: PluginSet, ctx: ProjectTrustContext,
                       warnings: list[str]) -> tuple[str, ProjectTrust] | None:
    from pi_core.hookspecs.results import ProjectTrust

    deciding: list[str] = []

    def failed(plugin: str, err: BaseException) -> None:  # a broken plugin must not decide, nor stop pi
        warnings.append(f'Extension "{plugins.source_of(plugin)}" project_trust error: {err or type(err).__name__}')

    def accept(plugin: str, value: object) -> bool:
        if isinstance(value, ProjectTrust):
            deciding.append(plugin)
            return True
        warnings.append(f'Extension "{plugins.source_of(plugin)}" project_trust returned {type(value).__name__}; '
                        "expected ProjectTrust or None (ignored)")
        return False

    verdict = await plugins.call("pi_project_trust", ctx=ctx, quiet=(Exception,), on_error=failed, accept=accept)
    return (deciding[0], verdict) if verdict is not None else None


def stderr_ui() -> UI:
    """The start-up UI of a mode that cannot ask: defaults, and ``notify`` on stderr."""
    from pi_core.ui import UI

    class StderrUI(UI):
        def notify(self, message: str, level: Literal["info", "warning", "error"] = "info") -> None:
            sys.stderr.write(message + "\n")

    return StderrUI()


def saved_trust(cwd: Path, agent_dir: Path, *, approve: bool | None = None) -> bool:
    """The decision for a command that cannot ask and runs no plugins (``pi install -l``, ``pi mcp ...``):
    ``approve`` (``-a`` / ``-na``) if given; trusted when nothing needs trust; else the saved decision;
    else ``defaultProjectTrust == "always"``. An unreadable trust.json counts as no decision."""
    if approve is not None:
        return approve
    if not protected_resources(cwd):
        return True
    try:
        entry = TrustStore(agent_dir).saved(cwd)
    except TrustStoreError:
        entry = None
    if entry is not None:
        return entry.trusted
    from pi_core.app.settings import Settings

    return bool(Settings.load(cwd, agent_dir, project_trusted=False).get("defaultProjectTrust") == "always")


_DECIDED: dict[str, bool] = {}  # canonical cwd -> this process's decision (one per ``pi`` process, like Pi)


def record_decision(decision: TrustDecision) -> None:
    """Remember this process's decision, so code without an ExtensionContext can ask (``project_trusted``)."""
    _DECIDED[canonical(decision.cwd)] = decision.trusted


def current_decision(cwd: Path) -> bool | None:
    """The decision this ``pi`` process made for ``cwd`` at start-up, or None when it made none."""
    return _DECIDED.get(canonical(cwd))


def project_trusted(cwd: Path, agent_dir: Path, *, approve: bool | None = None) -> bool:
    """Whether ``cwd``'s protected resources may be read now: this process's decision when it made one
    (a plugin inside ``pi``), else ``saved_trust`` (a command that cannot ask). Plugins with an
    ``ExtensionContext`` should use ``ctx.is_project_trusted()``."""
    decided = _DECIDED.get(canonical(cwd))
    if decided is not None and approve is None:
        return decided
    return saved_trust(cwd, agent_dir, approve=approve)
