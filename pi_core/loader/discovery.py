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
import importlib
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pi_core.config_paths import default_cache_dir

try:  # hashlib would load OpenSSL (~10 ms) just to name a cache file; the fingerprint needs no crypto
    from _blake2 import blake2b as _digest
except ImportError:  # a Python built without it
    from hashlib import sha256 as _digest  # type: ignore[assignment]

CACHE_FORMAT = 1
BUILTIN_DIST = "pi-harness"
OPTIONAL_GROUP = "pi.optional"
PLUGIN_PREFIX = "plugin:"  # ``-e plugin:NAME`` enables the opt-in entry point NAME
_METADATA_SUFFIXES = (".dist-info", ".egg-info")
_VALUE = r"(?P<module>[\w.]+)\s*(:\s*(?P<attr>[\w.]+)\s*)?((?P<extras>\[.*\])\s*)?$"


class _Slots:
    """Equality and repr over ``__slots__``."""

    __slots__: tuple[str, ...] = ()

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and all(getattr(self, n) == getattr(other, n) for n in self.__slots__)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(repr(getattr(self, n)) for n in self.__slots__)})"


class DistRef(_Slots):
    """The distribution that declares an entry point (what ``EntryPoint.dist`` offers: name, version)."""

    __slots__ = ("name", "version")

    def __init__(self, name: str, version: str) -> None:
        self.name, self.version = name, version


class CachedEntryPoint(_Slots):
    """Duck-compatible with ``importlib.metadata.EntryPoint`` for name, value, group, dist and load().

    Plain slotted classes rather than dataclasses or NamedTuples: this module runs on every start, and building
    either costs more than the cache hit itself (a NamedTuple here cost ~5 M instructions).
    """

    __slots__ = ("dist", "group", "name", "value")

    def __init__(self, name: str, value: str, group: str, dist: DistRef | None = None) -> None:
        self.name, self.value, self.group, self.dist = name, value, group, dist

    def to_json(self) -> dict[str, Any]:  # open: JSON (the discovery cache)
        return {"name": self.name, "value": self.value, "group": self.group,
                "dist": {"name": self.dist.name, "version": self.dist.version} if self.dist else None}

    def load(self) -> object:
        """Import the module the value names (and follow ``:attr`` when given)."""
        import re

        match = re.match(_VALUE, self.value)
        if match is None:
            raise ValueError(f"entry point {self.name!r} has an invalid value {self.value!r}; expected 'package.module' or 'package.module:attribute'")
        target: Any = importlib.import_module(match.group("module"))
        for part in filter(None, (match.group("attr") or "").split(".")):
            target = getattr(target, part)
        return target


def cache_file(cache_dir: Path, paths: Sequence[str]) -> Path:
    environment = _digest("\0".join([sys.prefix, *paths]).encode()).hexdigest()[:16]
    return cache_dir / f"entry-points-{environment}.json"


def fingerprint(paths: Sequence[str]) -> str:
    """A digest of the installed distributions on ``paths``: their metadata dirs and mtimes."""
    digest = _digest()
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
    import re
    from importlib import metadata

    seen: set[str] = set()
    found: list[CachedEntryPoint] = []
    for dist in metadata.distributions(path=list(paths)):
        name = dist.metadata["Name"] or ""
        if (key := re.sub(r"[-_.]+", "-", name).lower()) in seen:  # names compared normalized
            continue
        seen.add(key)
        ref = DistRef(name, dist.version or "")
        found.extend(CachedEntryPoint(ep.name, ep.value, ep.group, ref) for ep in dist.entry_points if ep.group == group)
    return found


def entry_points(group: str = "pi", *, cache_dir: Path | None = None,
                 paths: Sequence[str] | None = None) -> list[CachedEntryPoint]:
    """The entry points of ``group`` on ``paths`` (default ``sys.path``), from the cache when nothing
    installed has changed since it was written, else scanned and cached."""
    return entry_point_groups((group,), cache_dir=cache_dir, paths=paths)[group]


def entry_point_groups(groups: Sequence[str], *, cache_dir: Path | None = None,
                       paths: Sequence[str] | None = None) -> dict[str, list[CachedEntryPoint]]:
    """``entry_points`` of several groups at once: one fingerprint and one cache read for all of them."""
    search = list(sys.path if paths is None else paths)
    target = cache_file(cache_dir or default_cache_dir(), search)
    current = fingerprint(search)
    cached = _read(target)
    stored: dict[str, Any] = cached["groups"] if cached.get("fingerprint") == current else {}
    found: dict[str, list[CachedEntryPoint]] = {}
    for group in groups:
        hit = _decode(stored[group]) if group in stored else None
        if hit is None:
            hit = scan(group, search)
            stored[group] = [ep.to_json() for ep in hit]
            _write(target, {"format": CACHE_FORMAT, "fingerprint": current, "groups": stored})
        found[group] = hit
    return found


def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}  # no cache yet, or a torn/corrupt one: scan again
    good = isinstance(data, dict) and data.get("format") == CACHE_FORMAT and isinstance(data.get("groups"), dict)
    return data if good else {}


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
        tmp.write_text(json.dumps(data), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()


def discover_groups(groups: Sequence[str]) -> dict[str, dict[str, list[CachedEntryPoint]]]:
    """The entry points of each group by name, from one look at what is installed; imports nothing
    (``pi --help`` reads them too)."""
    found: dict[str, dict[str, list[CachedEntryPoint]]] = {group: {} for group in groups}
    for group, eps in entry_point_groups(groups).items():
        for ep in eps:
            found[group].setdefault(ep.name, []).append(ep)
    return found


def dist_label(ep: CachedEntryPoint) -> str:
    """``name version`` of the distribution declaring ``ep`` (its value when unknown): a plugin's source."""
    dist = getattr(ep, "dist", None)  # duck-typed: an importlib.metadata.EntryPoint may have none
    return f"{dist.name} {dist.version}" if dist else ep.value


def is_builtin(ep: CachedEntryPoint) -> bool:
    dist = getattr(ep, "dist", None)
    return dist is not None and dist.name.replace("_", "-").lower() == BUILTIN_DIST


def chosen_entry_point(eps: list[CachedEntryPoint]) -> CachedEntryPoint:
    """Of the entry points sharing one name, the one that loads: an installed one beats the built-in."""
    others = [ep for ep in eps if not is_builtin(ep)]
    return others[0] if others else eps[0]
