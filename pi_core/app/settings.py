"""User settings: global ``<agentDir>/settings.toml`` merged with the project's ``.pi/settings.toml``
(docs/config.md#settings).

Keys are Pi's ``settings.json`` keys (camelCase, nested tables for ``compaction``, ``retry``...) plus
pi's own ``disabled_plugins``. In each scope Pi's ``settings.json`` lies under the TOML file
(settings_scope: reading, checking and writing one scope's files). Project values win; tables merge one
level deep; lists are replaced.
"""

from __future__ import annotations

import os
from pathlib import Path

from pi_core import config_paths
from pi_core.app.settings_scope import (
    MISSING,
    Scope,
    ScopeState,
    SettingsError,
    deepcopy,
    get_path,
    merge_settings,
    migrate_legacy,
    set_path,
)

TYPE_CHECKING = False  # typing's, without importing typing: `pi --help` reads settings (pi_core/__init__.py)
if TYPE_CHECKING:
    from typing import Any

    from pi_core.app.settings_schema import (
        BranchSummaryTable,
        RetryTable,
        SettingsFile,
        TerminalTable,
    )
    from pi_core.types import CompactionSettings, Model

DEFAULT_HTTP_IDLE_TIMEOUT_MS = 300_000


class Settings:
    """Effective settings of one working directory. Build with ``Settings.load(cwd, project_trusted=...)``.

    The project scope is read only while the project is trusted (docs/config.md#project-trust);
    ``trust_project()`` reads it once a run has decided to.
    """

    def __init__(self, cwd: str | Path, agent_dir: str | Path | None = None) -> None:
        base = Path(agent_dir) if agent_dir is not None else config_paths.agent_dir()
        project = Path(cwd) / ".pi"
        self._scopes = {
            "global": ScopeState("global", base / "settings.toml", base / "settings.json"),
            "project": ScopeState("project", project / "settings.toml", project / "settings.json"),
        }
        self._errors: list[SettingsError] = []
        self._merged_data: dict[str, Any] | None = {}
        self._values: SettingsFile | None = None
        self.project_trusted = False

    @classmethod
    def load(cls, cwd: str | Path, agent_dir: str | Path | None = None, *, project_trusted: bool) -> Settings:
        settings = cls(cwd, agent_dir)
        settings.project_trusted = project_trusted
        for scope in settings._active_scopes():
            scope.load(settings._errors, keep_on_error=False)
        settings._remerge()
        return settings

    def _active_scopes(self) -> list[ScopeState]:
        return [scope for name, scope in self._scopes.items() if name != "project" or self.project_trusted]

    def has_project_file(self) -> bool:
        """Whether the project has a settings file: what trusting the project would add."""
        return self._scopes["project"].has_file()

    def trust_project(self) -> None:
        """The run trusts the project: read its settings file too."""
        if not self.project_trusted:
            self.project_trusted = True
            project = self._scopes["project"]
            project.load(self._errors, keep_on_error=False)
            if project.data:  # an empty or missing file changes nothing: keep the typed values already made
                self._remerge()

    @classmethod
    def from_dict(cls, data: dict[str, Any], cwd: str | Path = ".") -> Settings:  # open: settings JSON (settings.json), values as the file has them
        """Settings from a dict (tests, SDK use). Changes stay in memory; nothing is written."""
        settings = cls(cwd, agent_dir=Path(os.devnull))
        settings.project_trusted = True
        settings._scopes["global"].data = migrate_legacy(deepcopy(data))
        for scope in settings._scopes.values():
            scope.broken = True  # no file behind these values: writes stay in memory
        settings._remerge()
        return settings

    def _remerge(self) -> None:
        self._merged_data = None  # merged (and the scopes checked) when first read
        self._values = None

    @property
    def _merged(self) -> dict[str, Any]:
        if self._merged_data is None:
            for scope in self._scopes.values():
                scope.check(self._errors)
            self._merged_data = merge_settings(self._scopes["global"].data, self._scopes["project"].data)
        return self._merged_data

    @property
    def values(self) -> SettingsFile:
        """The effective settings, typed (settings_schema.SettingsFile): every key valid or at its default."""
        if self._values is None:
            from pi_core.app.settings_schema import effective

            self._values = effective(self._merged)
        return self._values

    def reload(self) -> None:
        """Re-read both files; a file that no longer parses keeps its previous values (error recorded)."""
        for scope in self._active_scopes():
            scope.load(self._errors, keep_on_error=True)
        self._remerge()

    # --- errors ------------------------------------------------------------------------------------

    @property
    def load_warnings(self) -> list[SettingsError]:
        """Errors recorded so far (not cleared)."""
        self._merged  # noqa: B018 (checks the files read)
        return list(self._errors)

    def drain_errors(self) -> list[SettingsError]:
        """Errors recorded so far, each returned once."""
        self._merged  # noqa: B018
        errors, self._errors = self._errors, []
        return errors

    # --- generic access ----------------------------------------------------------------------------

    def get(self, key: str, default: Any = None) -> Any:  # open: settings JSON (settings.json), values as the file has them
        """A merged value by dotted key (``"compaction.reserveTokens"``)."""
        value = get_path(self._merged, tuple(key.split(".")))
        return default if value is MISSING else deepcopy(value)

    def scope_data(self, scope: Scope) -> dict[str, Any]:  # open: settings JSON (settings.json), values as the file has them
        self._merged  # noqa: B018
        return deepcopy(self._scopes[scope].data)

    def scope_path(self, scope: Scope) -> Path:
        """The file a scope is read from (for messages): its TOML file, or Pi's settings.json without one."""
        state = self._scopes[scope]
        return state.json_path if state.json_path.is_file() and not state.toml_path.is_file() else state.toml_path

    def as_dict(self) -> dict[str, Any]:  # open: settings JSON (settings.json), values as the file has them
        return deepcopy(self._merged)

    def set(self, key: str, value: Any, scope: Scope = "global") -> None:  # open: settings JSON (settings.json), values as the file has them
        """Change a key (dotted for nested tables) and save that scope; None removes the key."""
        if scope == "project" and not self.project_trusted:
            from pi_core.errors import PiError

            raise PiError(f"The project is not trusted; refusing to write {key} to its settings. "
                          "Trust it first (--approve for one run, or /trust).")
        if value is not None:
            from pi_core.app.settings_schema import value_problem

            problem = value_problem(key, value)
            if problem is not None:
                from pi_core.errors import PiError

                raise PiError(f"Not saved: {problem}")
        state = self._scopes[scope]
        path = tuple(key.split("."))
        set_path(state.data, path, MISSING if value is None else deepcopy(value))
        state.modified.add(path)
        self._remerge()
        state.write(self._errors)
        self._remerge()

    def _raw_names(self, *keys: str) -> list[str]:
        """Names listed under ``keys`` in either scope, unchecked: ``pi --help`` needs only these."""
        names: list[Any] = []
        for scope in self._active_scopes():
            for key in keys:
                value = scope.data.get(key)
                names += value if isinstance(value, list) else []
        return [name for name in dict.fromkeys(names) if isinstance(name, str)]

    # --- typed accessors ---------------------------------------------------------------------------

    @property
    def default_provider(self) -> str | None:
        return self.values.default_provider

    @property
    def default_model(self) -> str | None:
        return self.values.default_model

    @property
    def default_thinking_level(self) -> str | None:
        return self.values.default_thinking_level

    def thinking_level_for(self, provider: str, model_id: str) -> str | None:
        """``modelThinkingLevels["provider/modelId"]``, else ``defaultThinkingLevel``: the start-up level."""
        return self.values.model_thinking_levels.get(f"{provider}/{model_id}") or self.default_thinking_level

    @property
    def default_tools(self) -> list[str] | None:
        return self.values.default_tools

    @property
    def disabled_plugins(self) -> list[str]:
        """``disabledPlugins`` (the 0.1 spelling ``disabled_plugins`` is still read)."""
        return self._raw_names("disabledPlugins", "disabled_plugins")

    @property
    def enabled_plugins(self) -> list[str]:
        """``enabledPlugins``: opt-in plugins (entry-point group ``pi.optional``) to load."""
        return self._raw_names("enabledPlugins", "enabled_plugins")

    @property
    def tool_overrides(self) -> dict[str, str]:
        """``toolOverrides = { read = "corp-read" }``: which plugin's tool wins a clash inside one layer."""
        return self.values.tool_overrides

    @property
    def steering_mode(self) -> str:
        return self.values.steering_mode

    @property
    def follow_up_mode(self) -> str:
        return self.values.follow_up_mode

    @property
    def transport(self) -> str:
        return self.values.transport

    @property
    def shell_path(self) -> str | None:
        return self.values.shell_path

    @property
    def shell_command_prefix(self) -> str | None:
        return self.values.shell_command_prefix

    @property
    def session_dir(self) -> str | None:
        return self.values.session_dir

    @property
    def theme(self) -> str:
        return self.values.theme or "dark"

    @property
    def hide_thinking_block(self) -> bool:
        return self.values.hide_thinking_block

    @property
    def quiet_startup(self) -> bool:
        return self.values.quiet_startup is True

    @property
    def enabled_models(self) -> list[str] | None:
        return self.values.enabled_models

    @property
    def thinking_budgets(self) -> dict[str, int] | None:
        """``thinkingBudgets``: token budgets per level for budget-based thinking APIs (positive ints only)."""
        budgets = self.values.thinking_budgets
        return {level: value for level in ("minimal", "low", "medium", "high", "xhigh", "max")
                if (value := getattr(budgets, level)) is not None} or None

    @property
    def block_images(self) -> bool:
        return self.values.images.block_images

    @property
    def auto_resize_images(self) -> bool:
        return self.values.images.auto_resize

    @property
    def enable_skill_commands(self) -> bool:
        return self.values.enable_skill_commands

    @property
    def packages(self) -> list[Any]:  # open: package sources, each a string or an object as settings.json has it
        return self.values.packages

    def resource_paths(self, kind: str) -> list[str]:
        """``extensions``, ``skills``, ``prompts`` or ``themes`` entries."""
        return list(getattr(self.values, kind))

    @property
    def compaction(self) -> CompactionSettings:
        return self.compaction_for(None)

    def compaction_for(self, model: Model | None) -> CompactionSettings:
        """The compaction settings for ``model`` (a Model or None): each token value from
        ``compaction.modelOverrides["provider/modelId"]``, else the ordinary setting, else the default."""
        from pi_core.types import CompactionSettings

        table = self.values.compaction
        override = table.model_overrides.get(f"{model.provider}/{model.id}") if model is not None else None
        reserve = override.reserve_tokens if override is not None else None
        keep = override.keep_recent_tokens if override is not None else None
        return CompactionSettings(enabled=table.enabled,
                                  reserve_tokens=table.reserve_tokens if reserve is None else reserve,
                                  keep_recent_tokens=table.keep_recent_tokens if keep is None else keep)

    @property
    def branch_summary(self) -> BranchSummaryTable:
        return self.values.branch_summary

    @property
    def terminal(self) -> TerminalTable:
        return self.values.terminal

    @property
    def http_idle_timeout_s(self) -> float:
        """``httpIdleTimeoutMs`` (Pi's name): how long a provider stream may go without a complete event
        (and a request without its response) before it fails; default 300000 ms, ``0``/``"disabled"`` = off."""
        value = self.values.http_idle_timeout_ms
        return 0.0 if value == "disabled" else float(value) / 1000

    @property
    def retry(self) -> RetryTable:
        return self.values.retry

    # --- runtime writes (always the global scope, like Pi) -------------------------------------------

    def set_default_model(self, provider: str, model_id: str) -> None:
        state = self._scopes["global"]
        for key, value in (("defaultProvider", provider), ("defaultModel", model_id)):
            state.data[key] = value
            state.modified.add((key,))
        state.write(self._errors)
        self._remerge()

    def set_default_thinking_level(self, level: str) -> None:
        self.set("defaultThinkingLevel", level)

    def set_steering_mode(self, mode: str) -> None:
        self.set("steeringMode", mode)

    def set_follow_up_mode(self, mode: str) -> None:
        self.set("followUpMode", mode)
