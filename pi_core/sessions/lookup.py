"""Resolve ``--session`` / ``--fork`` arguments: a file path or a session-id prefix (docs/cli.md#session-flags)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from pi_core.sessions.errors import SessionError, SessionNotFound
from pi_core.sessions.store import (
    default_session_dir,
    list_all_sessions,
    list_sessions,
    read_header,
)

_SESSION_ID = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?")


@dataclass
class FoundSession:
    """A resolved session. ``other_project`` is True for an id match outside this cwd's sessions:
    the CLI then asks ``Fork this session into current directory? [y/N]`` and, on yes, calls
    ``SessionManager.fork_from(path, cwd, session_dir)``."""

    path: Path
    cwd: str
    other_project: bool = False


def looks_like_path(arg: str) -> bool:
    return "/" in arg or "\\" in arg or arg.endswith(".jsonl")


def find_session(path_or_prefix: str, cwd: str | Path, session_dir: str | Path | None = None) -> FoundSession:
    """A path (missing files allowed: the session is created there), else the newest session of this
    project whose id starts with the prefix, else one from any project. Raises ``SessionNotFound``."""
    if looks_like_path(path_or_prefix):
        path = Path(path_or_prefix).expanduser().resolve()
        return FoundSession(path=path, cwd=str(cwd))
    for info in list_sessions(cwd, session_dir):
        if info.id.startswith(path_or_prefix):
            return FoundSession(path=info.path, cwd=info.cwd)
    local_dir = Path(session_dir).resolve() if session_dir else None
    for info in list_all_sessions():
        if info.id.startswith(path_or_prefix):
            same_dir = local_dir is not None and info.path.parent.resolve() == local_dir
            return FoundSession(path=info.path, cwd=info.cwd, other_project=not same_dir and info.cwd != str(cwd))
    raise SessionNotFound(path_or_prefix)


def check_session_id(session_id: str) -> None:
    """``--session-id``: letters, digits, ``.``, ``_`` and ``-``, starting and ending with a letter or digit
    (the id becomes part of the file name)."""
    if not _SESSION_ID.fullmatch(session_id):
        raise SessionError("Session id must be non-empty, contain only alphanumeric characters, '-', '_', and '.', "
                           "and start and end with an alphanumeric character")


def find_by_id(session_id: str, cwd: str | Path, session_dir: str | Path | None = None) -> Path | None:
    """The session file of this project whose header id is exactly ``session_id``, or None.

    With a custom ``session_dir`` shared by several projects, only a session recorded for ``cwd`` counts."""
    directory = Path(session_dir) if session_dir else default_session_dir(str(cwd))
    shared = session_dir is not None and Path(session_dir).resolve() != default_session_dir(str(cwd)).resolve()
    try:
        files = sorted(directory.glob("*.jsonl"))
    except OSError:
        return None
    for path in files:
        header = read_header(path)
        if header is None or header.get("id") != session_id:
            continue
        if shared and Path(str(header.get("cwd", ""))).resolve() != Path(cwd).resolve():
            continue
        return path
    return None
