"""User settings: global ``<agentDir>/settings.toml`` merged with the project's ``.pi/settings.toml``
(docs/config.md#settings).

Keys are Pi's ``settings.json`` keys (camelCase, nested tables for ``compaction``, ``retry``...) plus
pi's own ``disabled_plugins``. Pi's ``settings.json`` is read when a scope has no TOML file yet; the
first write then creates the TOML file from it. Project values win; tables merge one level deep;
lists are replaced. Writes take a file lock, merge only the keys changed in this process into the
file's current content and replace the file atomically; a scope whose file failed to parse is never
written.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

from pi_core import config_paths
from pi_core.app.slot_record import SlotRecord

TYPE_CHECKING = False  # typing's, without importing typing: `pi --help` reads settings (pi_core/__init__.py)
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

Scope = str  # "global" | "project"
_MISSING: Any = object()


class SettingsError(SlotRecord):
    __slots__ = ("message", "scope")

    def __init__(self, scope: Scope, message: str) -> None:
        self.scope = scope
        self.message = message

    def warning(self, context: str) -> str:
        """The startup line: ``Warning: <msg>``, the message naming the file (and line and column)."""
        return f"Warning: {self.message}"


DEFAULT_HTTP_IDLE_TIMEOUT_MS = 300_000


class RetrySettings(SlotRecord):
    __slots__ = (
        "base_delay_ms",
        "enabled",
        "max_retries",
        "provider_max_retries",
        "provider_max_retry_delay_ms",
        "provider_timeout_ms",
    )

    def __init__(self, enabled: bool = True, max_retries: int = 3, base_delay_ms: int = 2000,
                 provider_timeout_ms: int | None = None, provider_max_retries: int | None = None,
                 provider_max_retry_delay_ms: int = 60000) -> None:
        self.enabled = enabled  # mutable: /settings turns auto-retry on and off for the session
        self.max_retries = max_retries
        self.base_delay_ms = base_delay_ms
        self.provider_timeout_ms = provider_timeout_ms
        self.provider_max_retries = provider_max_retries
        self.provider_max_retry_delay_ms = provider_max_retry_delay_ms

    def should_retry(self, message: Any) -> bool:
        """Whether an error reply is worth another attempt (AgentSession's auto-retry asks)."""
        from pi_core.llm.retry import is_retryable_error

        return is_retryable_error(message)

    def delay_ms(self, attempt: int) -> int:
        from pi_core.llm.retry import agent_retry_delay_ms

        return agent_retry_delay_ms(self.base_delay_ms, attempt)


class BranchSummarySettings(SlotRecord):
    __slots__ = ("reserve_tokens", "skip_prompt")

    def __init__(self, reserve_tokens: int = 16384, skip_prompt: bool = False) -> None:
        self.reserve_tokens = reserve_tokens
        self.skip_prompt = skip_prompt


def migrate_legacy(data: dict[str, Any]) -> dict[str, Any]:
    """Rename keys older Pi versions wrote (docs/config.md#older-key-names). Mutates and returns ``data``."""
    if "queueMode" in data:
        data.setdefault("steeringMode", data["queueMode"])
        del data["queueMode"]
    if isinstance(data.get("websockets"), bool):
        data.setdefault("transport", "websocket" if data["websockets"] else "sse")
        del data["websockets"]
    skills = data.get("skills")
    if isinstance(skills, dict):
        if "enableSkillCommands" in skills:
            data.setdefault("enableSkillCommands", skills["enableSkillCommands"])
        directories = skills.get("customDirectories")
        data["skills"] = list(directories) if isinstance(directories, list) else []
    retry = data.get("retry")
    if isinstance(retry, dict) and "maxDelayMs" in retry:
        provider = retry.setdefault("provider", {})
        if isinstance(provider, dict):
            provider.setdefault("maxRetryDelayMs", retry["maxDelayMs"])
        del retry["maxDelayMs"]
    return data


def _deepcopy(value: Any) -> Any:
    """``copy.deepcopy``; the module is imported only when there is something to copy: ``pi --help`` without a
    settings file copies nothing, and importing ``copy`` searches the whole ``sys.path`` for Jython's org.python."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, dict) and not value:
        return {}
    import copy

    return copy.deepcopy(value)


def merge_settings(global_data: dict[str, Any], project_data: dict[str, Any]) -> dict[str, Any]:
    """Project over global: tables merge one level deep, everything else (lists too) is replaced."""
    merged = _deepcopy(global_data)
    for key, value in project_data.items():
        if value is None:
            continue
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = {**merged[key], **_deepcopy(value)}
        else:
            merged[key] = _deepcopy(value)
    return merged


def _read_scope_file(toml_path: Path, json_path: Path) -> dict[str, Any] | None:
    """Content of a scope (TOML first, else Pi's JSON); None if neither exists. Raises SettingsFileError
    (naming file, line and column) when it does not parse, OSError when it cannot be read."""
    for path in (toml_path, json_path):
        if path.is_file():
            from pi_core.app.settings_schema import (
                parse_settings_text,  # (and tomllib) only when there is a file
            )

            try:
                text = path.read_text(encoding="utf-8")
            except UnicodeDecodeError as err:
                raise ValueError(f"Invalid settings file {path}: not UTF-8 text ({err.reason})") from err
            return parse_settings_text(path, text)
    return None


@contextlib.contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """An exclusive lock on ``path`` + ``.lock`` between pi processes (settings, trust.json)."""
    lock_path = path.with_name(path.name + ".lock")
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_path, "a+b") as fh:
        if sys.platform == "win32":
            import msvcrt

            fh.seek(0)
            msvcrt.locking(fh.fileno(), msvcrt.LK_LOCK, 1)
            try:
                yield
            finally:
                fh.seek(0)
                msvcrt.locking(fh.fileno(), msvcrt.LK_UNLCK, 1)
            return
        import fcntl

        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def _get_path(data: dict[str, Any], path: tuple[str, ...]) -> Any:
    current: Any = data
    for part in path:
        if not isinstance(current, dict) or part not in current:
            return _MISSING
        current = current[part]
    return current


def _set_path(data: dict[str, Any], path: tuple[str, ...], value: Any) -> None:
    current = data
    for part in path[:-1]:
        child = current.get(part)
        if not isinstance(child, dict):
            child = current[part] = {}
        current = child
    if value is _MISSING:
        current.pop(path[-1], None)
    else:
        current[path[-1]] = value


class _ScopeState:
    def __init__(self, scope: Scope, toml_path: Path, json_path: Path) -> None:
        self.scope = scope
        self.toml_path = toml_path
        self.json_path = json_path
        self.data: dict[str, Any] = {}
        self.broken = False
        self.modified: set[tuple[str, ...]] = set()

    def load(self, errors: list[SettingsError], keep_on_error: bool) -> None:
        try:
            content = _read_scope_file(self.toml_path, self.json_path)
        except (OSError, ValueError) as err:
            self.broken = True
            errors.append(SettingsError(self.scope, str(err)))
            if not keep_on_error:
                self.data = {}
            return
        self.broken = False
        self.data = migrate_legacy(content or {})
        if content:
            from pi_core.app.settings_schema import drop_invalid

            source = self.toml_path if self.toml_path.is_file() else self.json_path
            errors.extend(SettingsError(self.scope, problem) for problem in drop_invalid(source, self.data))

    def write(self, errors: list[SettingsError]) -> None:
        if self.broken or not self.modified:
            return  # never clobber a file we could not read
        import tomli_w

        with file_lock(self.toml_path):
            try:
                current = migrate_legacy(_read_scope_file(self.toml_path, self.json_path) or {})
            except (OSError, ValueError) as err:
                errors.append(SettingsError(self.scope, f"not saved, the file does not parse: {err}"))
                return
            for path in sorted(self.modified):
                value = _get_path(self.data, path)
                _set_path(current, path, value if value is _MISSING else _deepcopy(value))
            text = tomli_w.dumps(current)
            self.toml_path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.toml_path.with_name(f".{self.toml_path.name}.{os.getpid()}.tmp")
            tmp.write_text(text, encoding="utf-8")
            os.replace(tmp, self.toml_path)
        self.data = merge_settings(current, {})
        self.modified.clear()


class Settings:
    """Effective settings of one working directory. Build with ``Settings.load(cwd, project_trusted=...)``.

    The project scope is read only while the project is trusted (docs/config.md#project-trust);
    ``trust_project()`` reads it once a run has decided to.
    """

    def __init__(self, cwd: str | Path, agent_dir: str | Path | None = None) -> None:
        base = Path(agent_dir) if agent_dir is not None else config_paths.agent_dir()
        project = Path(cwd) / ".pi"
        self._scopes = {
            "global": _ScopeState("global", base / "settings.toml", base / "settings.json"),
            "project": _ScopeState("project", project / "settings.toml", project / "settings.json"),
        }
        self._errors: list[SettingsError] = []
        self._merged: dict[str, Any] = {}
        self.project_trusted = False

    @classmethod
    def load(cls, cwd: str | Path, agent_dir: str | Path | None = None, *, project_trusted: bool) -> Settings:
        settings = cls(cwd, agent_dir)
        settings.project_trusted = project_trusted
        for scope in settings._active_scopes():
            scope.load(settings._errors, keep_on_error=False)
        settings._remerge()
        return settings

    def _active_scopes(self) -> list[_ScopeState]:
        return [scope for name, scope in self._scopes.items() if name != "project" or self.project_trusted]

    def has_project_file(self) -> bool:
        """Whether the project has a settings file: what trusting the project would add."""
        project = self._scopes["project"]
        return project.toml_path.is_file() or project.json_path.is_file()

    def trust_project(self) -> None:
        """The run trusts the project: read its settings file too."""
        if not self.project_trusted:
            self.project_trusted = True
            self._scopes["project"].load(self._errors, keep_on_error=False)
            self._remerge()

    @classmethod
    def from_dict(cls, data: dict[str, Any], cwd: str | Path = ".") -> Settings:
        """Settings from a dict (tests, SDK use). Changes stay in memory; nothing is written."""
        settings = cls(cwd, agent_dir=Path(os.devnull))
        settings.project_trusted = True
        settings._scopes["global"].data = migrate_legacy(_deepcopy(data))
        for scope in settings._scopes.values():
            scope.broken = True  # no file behind these values: writes stay in memory
        settings._remerge()
        return settings

    def _remerge(self) -> None:
        self._merged = merge_settings(self._scopes["global"].data, self._scopes["project"].data)

    def reload(self) -> None:
        """Re-read both files; a file that no longer parses keeps its previous values (error recorded)."""
        for scope in self._active_scopes():
            scope.load(self._errors, keep_on_error=True)
        self._remerge()

    # --- errors ------------------------------------------------------------------------------------

    @property
    def load_warnings(self) -> list[SettingsError]:
        """Errors recorded so far (not cleared)."""
        return list(self._errors)

    def drain_errors(self) -> list[SettingsError]:
        """Errors recorded so far, each returned once."""
        errors, self._errors = self._errors, []
        return errors

    # --- generic access ----------------------------------------------------------------------------

    def get(self, key: str, default: Any = None) -> Any:
        """A merged value by dotted key (``"compaction.reserveTokens"``)."""
        value = _get_path(self._merged, tuple(key.split(".")))
        return default if value is _MISSING else _deepcopy(value)

    def scope_data(self, scope: Scope) -> dict[str, Any]:
        return _deepcopy(self._scopes[scope].data)

    def scope_path(self, scope: Scope) -> Path:
        """The file a scope is read from (for messages): its TOML file, or Pi's settings.json without one."""
        state = self._scopes[scope]
        return state.json_path if state.json_path.is_file() and not state.toml_path.is_file() else state.toml_path

    def as_dict(self) -> dict[str, Any]:
        return _deepcopy(self._merged)

    def set(self, key: str, value: Any, scope: Scope = "global") -> None:
        """Change a key (dotted for nested tables) and save that scope; None removes the key."""
        if scope == "project" and not self.project_trusted:
            from pi_core.errors import PiError

            raise PiError(f"The project is not trusted; refusing to write {key} to its settings. "
                          "Trust it first (--approve for one run, or /trust).")
        state = self._scopes[scope]
        path = tuple(key.split("."))
        _set_path(state.data, path, _MISSING if value is None else _deepcopy(value))
        state.modified.add(path)
        self._remerge()
        state.write(self._errors)
        self._remerge()

    def _typed(self, key: str, kind: type | tuple[type, ...], default: Any) -> Any:
        value = self.get(key)
        if isinstance(value, bool) and kind in (int, float):
            return default
        return value if isinstance(value, kind) else default

    # --- typed accessors ---------------------------------------------------------------------------

    @property
    def default_provider(self) -> str | None:
        return self._typed("defaultProvider", str, None)

    @property
    def default_model(self) -> str | None:
        return self._typed("defaultModel", str, None)

    @property
    def default_thinking_level(self) -> str | None:
        return self._typed("defaultThinkingLevel", str, None)

    @property
    def default_tools(self) -> list[str] | None:
        value = self._typed("defaultTools", list, None)
        return [str(v) for v in value] if value is not None else None

    @property
    def disabled_plugins(self) -> list[str]:
        """``disabledPlugins`` (the 0.1 spelling ``disabled_plugins`` is still read)."""
        names = self._typed("disabledPlugins", list, []) + self._typed("disabled_plugins", list, [])
        return [str(v) for v in dict.fromkeys(names)]

    @property
    def enabled_plugins(self) -> list[str]:
        """``enabledPlugins``: opt-in plugins (entry-point group ``pi.optional``) to load."""
        names = self._typed("enabledPlugins", list, []) + self._typed("enabled_plugins", list, [])
        return [str(v) for v in dict.fromkeys(names)]

    @property
    def tool_overrides(self) -> dict[str, str]:
        """``toolOverrides = { read = "corp-read" }``: which plugin's tool wins a clash inside one layer."""
        value = self._typed("toolOverrides", dict, {})
        return {str(k): str(v) for k, v in value.items()}

    @property
    def steering_mode(self) -> str:
        return self._typed("steeringMode", str, "one-at-a-time")

    @property
    def follow_up_mode(self) -> str:
        return self._typed("followUpMode", str, "one-at-a-time")

    @property
    def transport(self) -> str:
        return self._typed("transport", str, "auto")

    @property
    def shell_path(self) -> str | None:
        return self._typed("shellPath", str, None)

    @property
    def shell_command_prefix(self) -> str | None:
        return self._typed("shellCommandPrefix", str, None)

    @property
    def session_dir(self) -> str | None:
        return self._typed("sessionDir", str, None)

    @property
    def theme(self) -> str:
        return self._typed("theme", str, "dark")

    @property
    def hide_thinking_block(self) -> bool:
        return self._typed("hideThinkingBlock", bool, False)

    @property
    def quiet_startup(self) -> bool:
        return self._typed("quietStartup", bool, False)

    @property
    def enabled_models(self) -> list[str] | None:
        return self._typed("enabledModels", list, None)

    @property
    def thinking_budgets(self) -> dict[str, int] | None:
        """``thinkingBudgets``: token budgets per level for budget-based thinking APIs (positive ints only)."""
        value = self._typed("thinkingBudgets", dict, None) or {}
        return {level: budget for level, budget in value.items()
                if isinstance(budget, int) and not isinstance(budget, bool) and budget > 0} or None

    @property
    def block_images(self) -> bool:
        return self._typed("images.blockImages", bool, False)

    @property
    def auto_resize_images(self) -> bool:
        return self._typed("images.autoResize", bool, True)

    @property
    def enable_skill_commands(self) -> bool:
        return self._typed("enableSkillCommands", bool, True)

    @property
    def packages(self) -> list[Any]:
        return self._typed("packages", list, [])

    def resource_paths(self, kind: str) -> list[str]:
        """``extensions``, ``skills``, ``prompts`` or ``themes`` entries."""
        return [str(v) for v in self._typed(kind, list, [])]

    @property
    def compaction(self) -> Any:
        from pi_core.types import CompactionSettings

        return CompactionSettings(
            enabled=self._typed("compaction.enabled", bool, True),
            reserve_tokens=self._typed("compaction.reserveTokens", int, 16384),
            keep_recent_tokens=self._typed("compaction.keepRecentTokens", int, 20000),
        )

    @property
    def branch_summary(self) -> BranchSummarySettings:
        return BranchSummarySettings(
            reserve_tokens=self._typed("branchSummary.reserveTokens", int, 16384),
            skip_prompt=self._typed("branchSummary.skipPrompt", bool, False),
        )

    @property
    def http_idle_timeout_s(self) -> float:
        """``httpIdleTimeoutMs`` (Pi's name): how long a provider stream may go without a complete event
        (and a request without its response) before it fails; default 300000 ms, ``0``/``"disabled"`` = off."""
        value = self.get("httpIdleTimeoutMs")
        if value == "disabled":
            return 0.0
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0:
            return float(value) / 1000
        return DEFAULT_HTTP_IDLE_TIMEOUT_MS / 1000

    @property
    def retry(self) -> RetrySettings:
        provider = self._typed("retry.provider", dict, {})

        def provider_int(key: str, default: int | None) -> int | None:
            value = provider.get(key)
            return value if isinstance(value, int) and not isinstance(value, bool) else default

        return RetrySettings(
            enabled=self._typed("retry.enabled", bool, True),
            max_retries=self._typed("retry.maxRetries", int, 3),
            base_delay_ms=self._typed("retry.baseDelayMs", int, 2000),
            provider_timeout_ms=provider_int("timeoutMs", None),
            provider_max_retries=provider_int("maxRetries", None),
            provider_max_retry_delay_ms=provider_int("maxRetryDelayMs", 60000) or 60000,
        )

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
