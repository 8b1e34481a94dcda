"""``pi -r``: choose a session of this project in the terminal."""

from __future__ import annotations

import sys
from pathlib import Path

from pi_core.sessions.errors import SessionError
from pi_core.sessions.store import SessionInfo

NO_TERMINAL = "--resume needs an interactive terminal to pick a session; use --continue or --session <path|id> instead"


def pick_session(sessions: list[SessionInfo]) -> Path | None:
    """Let the user choose one of ``sessions`` (newest first); None when cancelled.

    Raises ``SessionError`` when stdin/stdout is not a terminal. The CLI prints ``No session selected``
    on None, and ``SessionManager.open(path)`` opens the choice.
    """
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise SessionError(NO_TERMINAL)
    if not sessions:
        return None
    from pi_plugins.interactive.pickers import pick_session as pick  # the UI's filterable picker

    return pick(sessions)
