"""Errors raised by the session layer; messages are Pi's exact texts."""

from __future__ import annotations

from pi_core.errors import PiError


class SessionError(PiError):
    """A session operation failed (unknown entry, invalid fork target, unreadable file...)."""


class SessionNotFound(SessionError):
    """``--session``/``--fork`` matched no file and no session id prefix."""

    def __init__(self, query: str) -> None:
        super().__init__(f"No session found matching '{query}'")
        self.query = query
