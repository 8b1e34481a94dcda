"""Credentials: ``auth.json`` (API keys and OAuth tokens), config-value resolution (``!command``, env var, literal).

``auth.json`` lives in the agent dir and is written at mode 0600. A file that group or others can read is
refused (ignored with a warning), because it holds secrets. Every change happens under an exclusive lock
on ``auth.json.lock`` and re-reads the file first, so two pi processes (say, both refreshing the same
OAuth token) never lose each other's writes. Entries are Pi's::

    {"openai": {"type": "api_key", "key": "sk-...", "env": {"NAME": "value"}},
     "anthropic": {"type": "oauth", "access": "...", "refresh": "...", "expires": 1767225600000}}

``expires`` is in epoch milliseconds; other fields of an OAuth entry belong to its provider's flow.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pi_core.errors import PiError
from pi_core.toolkit.private_files import file_lock, lock_path, write_private_json

COMMAND_TIMEOUT_S = 10.0
_command_cache: dict[str, str | None] = {}


def run_value_command(command: str) -> str | None:
    """Run a ``!command`` config value in a shell; trimmed stdout, or None on failure/empty output."""
    try:
        done = subprocess.run(command, shell=True, capture_output=True, text=True,
                              timeout=COMMAND_TIMEOUT_S, stdin=subprocess.DEVNULL, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    return done.stdout.strip() or None


def resolve_config_value(value: str, *, cache: bool = False) -> str | None:
    """Resolve an apiKey/header value: ``!cmd`` runs a shell command, a set env var name gives its value,
    anything else is the literal. ``cache`` keeps a command's result for the life of the process."""
    if value.startswith("!"):
        if cache and value in _command_cache:
            return _command_cache[value]
        result = run_value_command(value[1:])
        if cache:
            _command_cache[value] = result
        return result
    return os.environ.get(value) or value


def resolve_headers(headers: dict[str, str] | None) -> dict[str, str] | None:
    """Resolve every header value; entries that resolve to nothing are dropped, and no entries gives None."""
    if not headers:
        return None
    resolved = {name: v for name, raw in headers.items() if (v := resolve_config_value(raw))}
    return resolved or None


def clear_command_cache() -> None:
    _command_cache.clear()


@dataclass(eq=False, repr=False)
class AuthStorage:
    """Credentials from ``auth.json``. ``warnings`` are plain texts; the caller prefixes ``Warning: ``."""

    path: Path
    data: dict[str, dict[str, Any]] = field(default_factory=dict)  # open: stored credentials, JSON (auth.json)
    warnings: list[str] = field(default_factory=list)

    @classmethod
    def load(cls, path: Path) -> AuthStorage:
        storage = cls(path)
        storage.reload()
        return storage

    @property
    def lock_path(self) -> Path:
        return lock_path(self.path)

    def reload(self) -> None:
        self.data, self.warnings = {}, []
        try:
            mode = self.path.stat().st_mode
        except (FileNotFoundError, NotADirectoryError):
            return
        if os.name == "posix" and mode & (stat.S_IRWXG | stat.S_IRWXO):
            self.warnings.append(
                f"ignoring {self.path}: it is readable by other users "
                f"(mode {stat.S_IMODE(mode):o}). Run: chmod 600 {self.path}")
            return
        try:
            parsed = json.loads(self.path.read_text(encoding="utf-8") or "{}")
        except (OSError, ValueError) as err:
            self.warnings.append(f"could not read {self.path}: {err}")
            return
        if not isinstance(parsed, dict):
            self.warnings.append(f"ignoring {self.path}: expected a JSON object")
            return
        self.data = {k: v for k, v in parsed.items() if isinstance(v, dict)}

    def providers(self) -> list[str]:
        return list(self.data)

    def credential(self, provider: str) -> dict[str, Any] | None:  # open: stored credentials, JSON (auth.json)
        return self.data.get(provider)

    def kind(self, provider: str) -> str | None:
        """``"api_key"``, ``"oauth"`` or None for what is stored for ``provider``."""
        cred = self.data.get(provider)
        kind = cred.get("type") if cred else None
        return kind if kind in ("api_key", "oauth") else None

    def has_key(self, provider: str) -> bool:
        """True when a usable credential is stored (never runs a ``!command``)."""
        cred = self.data.get(provider)
        if not cred:
            return False
        if cred.get("type") == "oauth":
            return bool(cred.get("access") or cred.get("refresh"))
        return cred.get("type") == "api_key" and bool(cred.get("key") or cred.get("env"))

    def api_key(self, provider: str) -> str | None:
        cred = self.data.get(provider)
        if not cred or cred.get("type") != "api_key" or not isinstance(cred.get("key"), str):
            return None
        return resolve_config_value(cred["key"], cache=True)

    def env(self, provider: str) -> dict[str, str]:
        """The credential's ``env`` object: settings that win over the process environment for it."""
        env = (self.data.get(provider) or {}).get("env")
        return {k: v for k, v in env.items() if isinstance(v, str)} if isinstance(env, dict) else {}

    def set_api_key(self, provider: str, key: str, env: dict[str, str] | None = None) -> None:
        entry: dict[str, Any] = {"type": "api_key", "key": key}
        if env:
            entry["env"] = env
        self.update(lambda data: {**data, provider: entry})

    def set_credential(self, provider: str, credential: dict[str, Any]) -> None:  # open: stored credentials, JSON (auth.json)
        self.update(lambda data: {**data, provider: credential})

    def remove(self, provider: str) -> bool:
        """Drop ``provider``'s entry; False when there was none (nothing is written then)."""
        removed = False

        def drop(data: dict[str, Any]) -> dict[str, Any] | None:
            nonlocal removed
            removed = provider in data
            return {k: v for k, v in data.items() if k != provider} if removed else None

        self.update(drop)
        return removed

    def update(self, change: Callable[[dict[str, Any]], dict[str, Any] | None]) -> None:  # open: stored credentials, JSON (auth.json)
        """Apply ``change`` to the current file contents under the lock (``None``: leave the file alone)."""
        with file_lock(self.lock_path):
            new = change(self._read_raw())
            if new is not None:
                self._write(new)

    @contextlib.contextmanager
    def locked(self) -> Iterator[dict[str, Any]]:  # open: stored credentials, JSON (auth.json)
        """The file's current entries, read under the lock that stays held for the block (a token refresh);
        ``save`` writes inside the block."""
        with file_lock(self.lock_path):
            yield self._read_raw()

    def save(self, data: dict[str, Any]) -> None:  # open: stored credentials, JSON (auth.json)
        """Replace the file's contents; only inside ``locked()``."""
        self._write(data)

    def _read_raw(self) -> dict[str, Any]:
        # Re-read instead of trusting self.data so an edit never drops entries another pi wrote meanwhile.
        self.reload()
        if self.warnings:
            raise PiError(f"{self.warnings[0]}; not changing it")
        return dict(self.data)

    def _write(self, data: dict[str, Any]) -> None:
        write_private_json(self.path, data)
        self.data = data
