"""Sessions in Pi's JSONL format: the entry tree, its files, context building
(compaction and export have their own wings).

Public names are imported lazily (``from pi_core.sessions import SessionManager``) so that importing
the package costs nothing until a session is used.
"""

from __future__ import annotations

from typing import Any

from pi_core import lazy_attribute

_EXPORTS = {
    "SessionManager": "pi_core.sessions.manager",
    "ForkResult": "pi_core.sessions.manager",
    "TreeNode": "pi_core.sessions.manager",
    "SessionContext": "pi_core.sessions.context",
    "build_session_context": "pi_core.sessions.context",
    "SessionError": "pi_core.sessions.errors",
    "SessionNotFound": "pi_core.sessions.errors",
    "SessionInfo": "pi_core.sessions.store",
    "list_sessions": "pi_core.sessions.store",
    "list_all_sessions": "pi_core.sessions.store",
    "find_most_recent_session": "pi_core.sessions.store",
    "resolve_session_dir": "pi_core.sessions.store",
    "default_session_dir": "pi_core.sessions.store",
    "load_entries_from_file": "pi_core.sessions.store",
    "find_session": "pi_core.sessions.lookup",
    "FoundSession": "pi_core.sessions.lookup",
    "convert_to_llm": "pi_core.sessions.messages",
    "migrate_stray_sessions": "pi_core.sessions.store",
    "CURRENT_SESSION_VERSION": "pi_core.sessions.format",
}


def __getattr__(name: str) -> Any:
    return lazy_attribute(__name__, _EXPORTS, globals(), name)


__all__ = list(_EXPORTS)
