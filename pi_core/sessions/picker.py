"""``pi -r``: choose a session of this project in the terminal."""

from __future__ import annotations

import sys
from datetime import datetime
from pathlib import Path

from pi_core.sessions.errors import SessionError
from pi_core.sessions.store import SessionInfo

NO_TERMINAL = "--resume needs an interactive terminal to pick a session; use --continue or --session <path|id> instead"


def describe(info: SessionInfo, width: int = 72) -> str:
    """One picker line: when, how many messages, and the name or first message."""
    when = datetime.fromtimestamp(info.modified / 1000).strftime("%Y-%m-%d %H:%M")
    title = " ".join((info.name or info.first_message).split())
    if len(title) > width:
        title = title[: width - 1] + "…"
    return f"{when}  {info.message_count:>4} msgs  {title}"


def pick_session(sessions: list[SessionInfo], title: str = "Resume session") -> Path | None:
    """Let the user choose one of ``sessions`` (newest first); None when cancelled.

    Raises ``SessionError`` when stdin/stdout is not a terminal. The CLI prints ``No session selected``
    on None, and ``SessionManager.open(path)`` opens the choice.
    """
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise SessionError(NO_TERMINAL)
    if not sessions:
        return None
    from prompt_toolkit.shortcuts import radiolist_dialog

    values = [(str(info.path), describe(info)) for info in sessions]
    choice = radiolist_dialog(title=title, text="Up/Down to move, Enter to choose, Esc to cancel", values=values).run()
    return Path(choice) if choice else None
