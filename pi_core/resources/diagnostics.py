"""Shared records for loaded resources: where one came from, and what went wrong while loading."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

DiagnosticType = Literal["warning", "error", "collision"]
Scope = Literal["user", "project", "temporary"]


@dataclass(frozen=True)
class Collision:
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


@dataclass(frozen=True)
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
