"""``pi -r``: choose a session of this project in the terminal."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from pi_core.sessions.errors import SessionError
from pi_core.sessions.store import SessionInfo

NO_TERMINAL = "--resume needs an interactive terminal to pick a session; use --continue or --session <path|id> instead"


NO_PICKER = ("--resume needs a session picker, which the interactive UI provides, and no loaded mode has one; "
             "use --continue or --session <path|id> instead")

Picker = Callable[[list[SessionInfo]], Path | None]


def pick_session(sessions: list[SessionInfo], picker: Picker | None) -> Path | None:
    """Let the user choose one of ``sessions`` (newest first) with ``picker`` (a mode's); None when cancelled.

    Raises ``SessionError`` when stdin/stdout is not a terminal or no picker exists. The CLI prints
    ``No session selected`` on None, and ``SessionManager.open(path)`` opens the choice.
    """
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise SessionError(NO_TERMINAL)
    if picker is None:
        raise SessionError(NO_PICKER)
    if not sessions:
        return None
    return picker(sessions)
