"""The session file as the kernel sees it: a Protocol, so the kernel and the session wing name it without importing
the typed entries (pydantic models) or the sessions wing that implements it."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from pi_core.types import AgentMessage


class SessionLog(Protocol):
    """The session file underneath (``pi_core.sessions.SessionManager``: the sessions wing is above the kernel),
    its entries as the dicts of Pi's JSONL; what ``SessionEntries`` reads and a ``new_session`` ``setup`` appends."""

    @property
    def session_id(self) -> str: ...
    @property
    def session_file(self) -> Path | None: ...
    @property
    def session_name(self) -> str | None: ...
    @property
    def leaf_id(self) -> str | None: ...
    @property
    def header(self) -> dict[str, Any]: ...  # open: session entries as Pi's JSONL records

    def get_entries(self) -> list[dict[str, Any]]: ...  # open: session entries as Pi's JSONL records
    def get_entry(self, entry_id: str) -> dict[str, Any] | None: ...  # open: session entries as Pi's JSONL records
    def get_branch(self, from_id: str | None = None) -> list[dict[str, Any]]: ...  # open: session entries as Pi's JSONL records
    def get_children(self, parent_id: str) -> list[dict[str, Any]]: ...  # open: session entries as Pi's JSONL records
    def get_label(self, entry_id: str) -> str | None: ...
    def leaf_entry(self) -> dict[str, Any] | None: ...  # open: session entries as Pi's JSONL records
    def append_message(self, message: AgentMessage | dict[str, Any]) -> str: ...  # open: or a message as Pi's JSON (bashExecution)
    def append_model_change(self, provider: str, model_id: str) -> str: ...
    def append_thinking_level_change(self, level: str) -> str: ...
    def append_custom_entry(self, custom_type: str, data: Any = None) -> str: ...  # open: plugin-defined data, stored in the session JSON
    def append_custom_message_entry(self, custom_type: str, content: Any, display: bool, details: Any = None) -> str: ...  # open: plugin-defined data, stored in the session JSON
    def append_session_info(self, name: str) -> str: ...
    def append_label_change(self, target_id: str, label: str | None) -> str: ...
