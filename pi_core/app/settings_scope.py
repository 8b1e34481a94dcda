"""One scope's settings files (docs/config.md#settings): Pi's ``settings.json`` layered under pi's
``settings.toml`` in the same folder, read, checked and written.

The TOML file wins key by key (tables merged all the way down), so a Pi user who keeps editing
``settings.json`` after pi wrote its first setting still sees each edit. pi writes only the TOML file,
and only the keys changed in this process, merged into the file's current content under a file lock and
replaced atomically; ``settings.json`` is Pi's and never written. A TOML file that failed to parse is never
written either.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

from pi_core.app.slot_record import SlotRecord

TYPE_CHECKING = False  # typing's, without importing typing: `pi --help` reads settings (pi_core/__init__.py)
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any, TypeVar

    _T = TypeVar("_T")

Scope = str  # "global" | "project"
MISSING: object = object()


class SettingsError(SlotRecord):
    __slots__ = ("message", "scope")

    def __init__(self, scope: Scope, message: str) -> None:
        self.scope = scope
        self.message = message

    def warning(self, context: str) -> str:
        """The startup line: ``Warning: <msg>``, the message naming the file (and line and column)."""
        return f"Warning: {self.message}"


def migrate_legacy(data: dict[str, Any]) -> dict[str, Any]:  # open: settings JSON (settings.json)
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


def deepcopy(value: _T) -> _T:
    """``copy.deepcopy``; the module is imported only when there is something to copy: ``pi --help`` without a
    settings file copies nothing, and importing ``copy`` searches the whole ``sys.path`` for Jython's org.python."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, dict) and not value:
        return type(value)()
    import copy

    return copy.deepcopy(value)


def merge_settings(global_data: dict[str, Any], project_data: dict[str, Any]) -> dict[str, Any]:  # open: settings JSON (settings.json)
    """Project over global: tables merge one level deep, everything else (lists too) is replaced."""
    merged = deepcopy(global_data)
    for key, value in project_data.items():
        if value is None:
            continue
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = {**merged[key], **deepcopy(value)}
        else:
            merged[key] = deepcopy(value)
    return merged


def _layered(under: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """``over`` on top of ``under`` (a copy): tables merge at every depth, so the TOML file's
    ``retry.provider.maxRetries`` leaves the JSON file's ``retry.provider.timeoutMs`` in force."""
    merged = deepcopy(under)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _layered(merged[key], value)
        else:
            merged[key] = deepcopy(value)
    return merged


def _read_file(path: Path) -> dict[str, Any] | None:
    """A settings file's content, None if it does not exist. Raises SettingsFileError (naming file, line and
    column) when it does not parse, ValueError when it is not UTF-8, OSError when it cannot be read."""
    if not path.is_file():
        return None
    from pi_core.app.settings_parse import (
        parse_settings_text,  # (and tomllib) only with a file
    )

    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise ValueError(f"Invalid settings file {path}: not UTF-8 text ({err.reason})") from err
    return migrate_legacy(parse_settings_text(path, text))


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


def get_path(data: dict[str, Any], path: tuple[str, ...]) -> Any:  # open: settings JSON (settings.json)
    """The value at a key path, or MISSING."""
    current: Any = data
    for part in path:
        if not isinstance(current, dict) or part not in current:
            return MISSING
        current = current[part]
    return current


def set_path(data: dict[str, Any], path: tuple[str, ...], value: Any) -> None:  # open: settings JSON (settings.json)
    """Set the value at a key path (tables made on the way); MISSING removes the key."""
    current = data
    for part in path[:-1]:
        child = current.get(part)
        if not isinstance(child, dict):
            child = current[part] = {}
        current = child
    if value is MISSING:
        current.pop(path[-1], None)
    else:
        current[path[-1]] = value


class ScopeState:
    """The global or the project scope: its two files' contents (``json``, ``toml``), and ``data``, the TOML
    layered over the JSON, which readers see and runtime changes edit (``modified`` says which keys)."""

    def __init__(self, scope: Scope, toml_path: Path, json_path: Path) -> None:
        self.scope = scope
        self.toml_path = toml_path
        self.json_path = json_path
        self.json: dict[str, Any] = {}
        self.toml: dict[str, Any] = {}
        self.data: dict[str, Any] = {}
        self.broken = False  # the TOML file did not parse: never written
        self.unchecked = False
        self.modified: set[tuple[str, ...]] = set()

    def has_file(self) -> bool:
        return self.toml_path.is_file() or self.json_path.is_file()

    def load(self, errors: list[SettingsError], keep_on_error: bool) -> None:
        """Read both files; one that does not parse counts as empty (or, with ``keep_on_error``, keeps what
        it held before) and is reported."""
        for path in (self.json_path, self.toml_path):
            try:
                content = _read_file(path) or {}
            except (OSError, ValueError) as err:
                errors.append(SettingsError(self.scope, str(err)))
                if path == self.toml_path:
                    self.broken = True
                if not keep_on_error:
                    self._set_layer(path, {})
                continue
            if path == self.toml_path:
                self.broken = False
            self._set_layer(path, content)
            self.unchecked = self.unchecked or bool(content)
        self.data = _layered(self.json, self.toml)

    def _set_layer(self, path: Path, content: dict[str, Any]) -> None:
        if path == self.toml_path:
            self.toml = content
        else:
            self.json = content

    def check(self, errors: list[SettingsError]) -> None:
        """Check each file's content (settings_schema.check_file) once, naming the file of each problem:
        ``pi --help`` reads only the plugin lists, unchecked, and so never imports pydantic."""
        if self.unchecked:
            from pi_core.app.settings_schema import check_file

            self.unchecked = False
            for path, content in ((self.json_path, self.json), (self.toml_path, self.toml)):
                if content:
                    errors.extend(SettingsError(self.scope, problem)
                                  for problem in check_file(path, content, scope=self.scope))
            self.data = _layered(self.json, self.toml)

    def write(self, errors: list[SettingsError]) -> None:
        """Save the keys changed in this process into the TOML file (a key removed here is removed from it;
        the JSON file's value, if any, shows through again)."""
        if self.broken or not self.modified:
            return  # never clobber a file we could not read
        import tomli_w

        with file_lock(self.toml_path):
            try:
                current = _read_file(self.toml_path) or {}
            except (OSError, ValueError) as err:
                errors.append(SettingsError(self.scope, f"not saved, the file does not parse: {err}"))
                return
            for path in sorted(self.modified):
                value = get_path(self.data, path)
                set_path(current, path, value if value is MISSING else deepcopy(value))
            text = tomli_w.dumps(current)
            self.toml_path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.toml_path.with_name(f".{self.toml_path.name}.{os.getpid()}.tmp")
            tmp.write_text(text, encoding="utf-8")
            os.replace(tmp, self.toml_path)
        self.modified.clear()
        from pi_core.app.settings_schema import check_file

        check_file(self.toml_path, current, scope=self.scope)  # another process's edits: reported at its start
        self.toml = current
        self.data = _layered(self.json, self.toml)
