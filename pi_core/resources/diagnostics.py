"""Shared records for loaded resources: where one came from, and what went wrong while loading."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, Literal, Protocol, TypeVar

DiagnosticType = Literal["warning", "error", "collision"]
Scope = Literal["user", "project", "temporary"]


@dataclass(frozen=True, repr=False)
class Collision:
    """Two resources of one type with the same name: which file won."""

    resource_type: Literal["skill", "prompt"]
    name: str
    winner_path: Path
    loser_path: Path


@dataclass(frozen=True)
class Diagnostic:
    """One problem found while loading a skill or prompt template (shown at startup, never fatal)."""

    type: DiagnosticType
    message: str
    path: Path
    collision: Collision | None = None

    def __str__(self) -> str:
        if self.collision is not None:
            c = self.collision
            return f"{self.message}: {c.winner_path} wins over {c.loser_path}"
        return f"{self.path}: {self.message}"


@dataclass(frozen=True, repr=False)
class SourceInfo:
    """Provenance of a resource, as RPC ``get_commands`` reports it (``sourceInfo``)."""

    path: Path
    source: str  # "auto" (discovered), "local" (explicit path), "cli", or a package source
    scope: Scope
    origin: Literal["top-level", "package"] = "top-level"
    base_dir: Path | None = None

    def to_json(self) -> dict[str, str]:
        data = {"path": str(self.path), "source": self.source, "scope": self.scope, "origin": self.origin}
        if self.base_dir is not None:
            data["baseDir"] = str(self.base_dir)
        return data


def expand_user_path(raw: str, cwd: Path) -> Path:
    """Resolve a user-given resource path: ``~`` expanded, relative to ``cwd``, lexically normalised.

    Like Pi, ``~name`` means ``$HOME/name`` (not another user's home).
    """
    text = raw.strip()
    home = Path.home()
    if text == "~":
        path = home
    elif text.startswith("~/"):
        path = home / text[2:]
    elif text.startswith("~"):
        path = home / text[1:]
    else:
        path = Path(text)
    return Path(os.path.normpath(cwd / path))


def is_under(path: Path, root: Path) -> bool:
    """Lexical containment (no symlink resolution), ``path == root`` included."""
    p, r = os.path.normpath(path), os.path.normpath(root)
    return p == r or p.startswith(r.rstrip(os.sep) + os.sep)


def canonical(path: Path) -> str:
    """The real path, used to load a file reached through two symlinks only once."""
    try:
        return os.path.realpath(path)
    except OSError:
        return os.path.normpath(path)


class _Named(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def file_path(self) -> Path: ...


_Resource = TypeVar("_Resource", bound=_Named)


class FirstByName(Generic[_Resource]):
    """Resources met in precedence order, kept by name: the first of a name wins and a later one gets a
    "collision" diagnostic; a file reached twice (symlinks, overlapping directories) counts once, silently."""

    def __init__(self, kind: Literal["skill", "prompt"], shown: str = "{}") -> None:
        self.kind, self.shown = kind, shown  # ``shown``: how a name is written in the message (``/{}``)
        self.loaded: dict[str, _Resource] = {}
        self.diagnostics: list[Diagnostic] = []
        self._collisions: list[Diagnostic] = []
        self._seen: set[str] = set()

    def first_visit(self, path: Path) -> bool:
        real = canonical(path)
        if real in self._seen:
            return False
        self._seen.add(real)
        return True

    def keep(self, resource: _Resource, path: Path) -> None:
        existing = self.loaded.get(resource.name)
        if existing is None:
            self.loaded[resource.name] = resource
            return
        self._collisions.append(Diagnostic("collision", f'name "{self.shown.format(resource.name)}" collision', path,
                                           Collision(self.kind, resource.name, existing.file_path, path)))

    def found(self) -> tuple[list[_Resource], list[Diagnostic]]:
        """The kept resources in order, and every diagnostic (collisions last)."""
        return list(self.loaded.values()), self.diagnostics + self._collisions
