"""Entry points of one group without reading every installed distribution's metadata on each start.

``importlib.metadata.entry_points()`` opens and parses ``entry_points.txt`` of every distribution on
``sys.path`` each time pi starts. This module keeps the result in a small JSON file keyed on a
fingerprint of what is installed: for every ``sys.path`` directory, the name and mtime of each
``*.dist-info`` / ``*.egg-info`` entry and of its ``entry_points.txt``. Installing, removing, upgrading
or editing a package changes the fingerprint, and the next call scans again. Nothing is imported:
``CachedEntryPoint.load()`` imports the plugin module only when the caller asks for it.

One cache file per Python environment (its name hashes ``sys.prefix`` and the path list), so several
venvs sharing an agent dir never overwrite each other's entry.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

CACHE_FORMAT = 1
_METADATA_SUFFIXES = (".dist-info", ".egg-info")
_VALUE = r"(?P<module>[\w.]+)\s*(:\s*(?P<attr>[\w.]+)\s*)?((?P<extras>\[.*\])\s*)?$"


class DistRef:
    """The distribution that declares an entry point (what ``EntryPoint.dist`` offers: name, version)."""

    __slots__ = ("name", "version")

    def __init__(self, name: str, version: str) -> None:
        self.name = name
        self.version = version

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DistRef) and (self.name, self.version) == (other.name, other.version)

    def __repr__(self) -> str:
        return f"DistRef({self.name!r}, {self.version!r})"


class CachedEntryPoint:
    """Duck-compatible with ``importlib.metadata.EntryPoint`` for name, value, group, dist and load().

    Plain slotted classes rather than dataclasses: this module runs on every start, and building a
    dataclass costs more than the cache hit itself.
    """

    __slots__ = ("dist", "group", "name", "value")

    def __init__(self, name: str, value: str, group: str, dist: DistRef | None = None) -> None:
        self.name = name
        self.value = value
        self.group = group
        self.dist = dist

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CachedEntryPoint) and self.to_json() == other.to_json()

    def __repr__(self) -> str:
        return f"CachedEntryPoint({self.name!r}, {self.value!r}, {self.group!r}, {self.dist!r})"

    def to_json(self) -> dict[str, Any]:
        dist = {"name": self.dist.name, "version": self.dist.version} if self.dist else None
        return {"name": self.name, "value": self.value, "group": self.group, "dist": dist}

    def load(self) -> Any:
        """Import the module the value names (and follow ``:attr`` when given)."""
        import re

        match = re.match(_VALUE, self.value)
        if match is None:
            raise ValueError(f"entry point {self.name!r} has an invalid value {self.value!r}; "
                             "expected 'package.module' or 'package.module:attribute'")
        target: Any = importlib.import_module(match.group("module"))
        for part in filter(None, (match.group("attr") or "").split(".")):
            target = getattr(target, part)
        return target


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/pi`` (``~/.cache/pi`` when unset)."""
    base = os.environ.get("XDG_CACHE_HOME", "").strip()
    return (Path(base) if base else Path.home() / ".cache") / "pi"


def cache_file(cache_dir: Path, paths: Sequence[str]) -> Path:
    environment = hashlib.sha256("\0".join([sys.prefix, *paths]).encode()).hexdigest()[:16]
    return cache_dir / f"entry-points-{environment}.json"


def fingerprint(paths: Sequence[str]) -> str:
    """A digest of the installed distributions on ``paths``: their metadata dirs and mtimes."""
    digest = hashlib.sha256()
    for entry in paths:
        digest.update(b"\0path\0" + os.fsencode(entry or "."))
        try:
            with os.scandir(entry or ".") as listing:
                names = sorted((item.name, item.path) for item in listing if item.name.endswith(_METADATA_SUFFIXES))
        except (FileNotFoundError, NotADirectoryError, PermissionError):
            # Not a readable directory (a zip, a missing dir): its own mtime stands for its contents.
            digest.update(_mtime(entry).encode())
            continue
        for name, path in names:
            digest.update(f"\0{name}\0{_mtime(path)}\0{_mtime(os.path.join(path, 'entry_points.txt'))}".encode())
    return digest.hexdigest()


def _mtime(path: str) -> str:
    try:
        return str(os.stat(path).st_mtime_ns)
    except OSError:
        return "-"


def scan(group: str, paths: Sequence[str]) -> list[CachedEntryPoint]:
    """Read the metadata (what a cache miss costs): the first distribution of each name on ``paths`` wins,
    as in ``importlib.metadata.entry_points()``."""
    from importlib import metadata

    seen: set[str] = set()
    found: list[CachedEntryPoint] = []
    for dist in metadata.distributions(path=list(paths)):
        name = dist.metadata["Name"] or ""
        key = _normalize(name)
        if key in seen:
            continue
        seen.add(key)
        ref = DistRef(name, dist.version or "")
        found.extend(CachedEntryPoint(ep.name, ep.value, ep.group, ref) for ep in dist.entry_points if ep.group == group)
    return found


def _normalize(name: str) -> str:
    import re

    return re.sub(r"[-_.]+", "-", name).lower()


def entry_points(group: str = "pi", *, cache_dir: Path | None = None,
                 paths: Sequence[str] | None = None) -> list[CachedEntryPoint]:
    """The entry points of ``group`` on ``paths`` (default ``sys.path``), from the cache when nothing
    installed has changed since it was written, else scanned and cached."""
    search = list(sys.path if paths is None else paths)
    target = cache_file(cache_dir or default_cache_dir(), search)
    current = fingerprint(search)
    cached = _read(target)
    if cached.get("fingerprint") == current and group in cached.get("groups", {}):
        hit = _decode(cached["groups"][group])
        if hit is not None:
            return hit
    found = scan(group, search)
    groups = cached.get("groups", {}) if cached.get("fingerprint") == current else {}
    groups[group] = [ep.to_json() for ep in found]
    _write(target, {"format": CACHE_FORMAT, "fingerprint": current, "groups": groups})
    return found


def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}  # no cache yet, or a torn/corrupt one: scan again
    if not isinstance(data, dict) or data.get("format") != CACHE_FORMAT or not isinstance(data.get("groups"), dict):
        return {}
    return data


def _decode(rows: Any) -> list[CachedEntryPoint] | None:
    try:
        return [CachedEntryPoint(row["name"], row["value"], row["group"],
                                 DistRef(**row["dist"]) if row.get("dist") else None) for row in rows]
    except (KeyError, TypeError):
        return None  # a cache written by something else: treat as a miss


def _write(path: Path, data: dict[str, Any]) -> None:
    # A read-only, full or misplaced cache dir only costs the next start a scan; discovery succeeded.
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError:
        return
    try:
        tmp.write_text(json.dumps(data), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()
