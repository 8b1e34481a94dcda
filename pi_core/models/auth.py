"""API keys: ``auth.json`` credentials, config-value resolution (``!command``, env var, literal).

``auth.json`` lives in the agent dir and is written at mode 0600. A file that group or others can read is
refused (ignored with a warning), because it holds secrets.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pi_core.errors import PiError

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


@dataclass
class AuthStorage:
    """Credentials from ``auth.json``: ``{"<provider>": {"type": "api_key", "key": "..."}}`` (OAuth entries are
    kept on disk untouched but not used: pi has no OAuth login). ``warnings`` are plain texts; the caller
    prefixes ``Warning: ``."""

    path: Path
    data: dict[str, dict[str, Any]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    @classmethod
    def load(cls, path: Path) -> AuthStorage:
        storage = cls(path)
        storage.reload()
        return storage

    def reload(self) -> None:
        self.data, self.warnings = {}, []
        try:
            mode = self.path.stat().st_mode
        except FileNotFoundError:
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

    def has_key(self, provider: str) -> bool:
        """True when a usable credential is stored (never runs a ``!command``)."""
        cred = self.data.get(provider)
        return bool(cred and cred.get("type") == "api_key" and cred.get("key"))

    def api_key(self, provider: str) -> str | None:
        cred = self.data.get(provider)
        if not cred or cred.get("type") != "api_key" or not isinstance(cred.get("key"), str):
            return None
        return resolve_config_value(cred["key"], cache=True)

    def set_api_key(self, provider: str, key: str) -> None:
        self._write({**self._read_raw(), provider: {"type": "api_key", "key": key}})

    def remove(self, provider: str) -> None:
        raw = self._read_raw()
        if provider in raw:
            del raw[provider]
            self._write(raw)

    def _read_raw(self) -> dict[str, Any]:
        # Re-read instead of trusting self.data so an edit never drops entries another pi wrote meanwhile.
        self.reload()
        if self.warnings:
            raise PiError(f"{self.warnings[0]}; not changing it")
        return dict(self.data)

    def _write(self, data: dict[str, Any]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, tmp = tempfile.mkstemp(prefix=".auth-", suffix=".json", dir=self.path.parent)
        try:
            os.fchmod(fd, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(data, handle, indent=2)
                handle.write("\n")
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        self.data = data
