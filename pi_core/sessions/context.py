"""The message list sent to the model from one leaf of the session tree (docs/sessions.md#building-the-context)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pi_core.sessions.format import Entry
from pi_core.sessions.messages import (
    Message,
    branch_summary_message,
    compaction_summary_message,
    custom_message,
    to_typed,
)

if TYPE_CHECKING:
    from pi_core.types import AgentMessage

_UNSET: Any = object()


@dataclass(eq=False, repr=False)
class SessionContext:
    """What the agent resumes with: messages (dicts), thinking level and the model ``{provider, modelId}``."""

    messages: list[Message] = field(default_factory=list)
    thinking_level: str = "off"
    model: dict[str, str] | None = None

    def typed_messages(self) -> list[AgentMessage]:
        """The messages as pi_core.types models."""
        return to_typed(self.messages)


def entry_message(entry: Entry) -> Message | None:
    """The message an entry contributes to the context, or None."""
    kind = entry.get("type")
    if kind == "message":
        return entry.get("message")
    if kind == "custom_message":
        return custom_message(
            entry.get("customType", ""),
            entry.get("content", ""),
            bool(entry.get("display")),
            entry.get("details"),
            entry.get("timestamp", ""),
        )
    if kind == "branch_summary" and entry.get("summary"):
        return branch_summary_message(entry["summary"], entry.get("fromId", ""), entry.get("timestamp", ""))
    return None


def path_to(leaf: Entry, by_id: dict[str, Entry]) -> list[Entry]:
    """Entries from the root down to ``leaf`` (a missing parent, or a cycle, ends the walk)."""
    path: list[Entry] = []
    seen: set[str] = set()
    current: Entry | None = leaf
    while current is not None:
        path.append(current)
        seen.add(current.get("id"))  # type: ignore[arg-type]
        parent_id = current.get("parentId")
        if not parent_id or parent_id in seen:
            break
        current = by_id.get(parent_id)
    path.reverse()
    return path


def build_session_context(
    entries: list[Entry],
    leaf_id: str | None = _UNSET,
    by_id: dict[str, Entry] | None = None,
    materialize: Callable[[list[Entry]], None] | None = None,
) -> SessionContext:
    """Messages, thinking level and model along the path root→leaf.

    ``leaf_id=None`` means "before the first entry" (empty context); an omitted or unknown id means the
    last entry. The latest compaction on the path replaces everything before its first kept entry.
    ``materialize`` completes lazily loaded entries before their messages are read (SessionManager passes it).
    """
    if leaf_id is None:
        return SessionContext()
    if by_id is None:
        by_id = {e["id"]: e for e in entries if "id" in e}
    leaf = by_id.get(leaf_id) if isinstance(leaf_id, str) else None
    if leaf is None:
        if not entries:
            return SessionContext()
        leaf = entries[-1]
    path = path_to(leaf, by_id)

    # Scan backwards: the latest setting of each kind wins, and only one message needs reading.
    thinking: str | None = None
    model: dict[str, str] | None = None
    model_found = False
    compaction_index = -1
    for index in range(len(path) - 1, -1, -1):
        entry = path[index]
        kind = entry.get("type")
        if kind == "thinking_level_change" and thinking is None and "thinkingLevel" in entry:
            thinking = entry["thinkingLevel"]
        elif kind == "model_change" and not model_found:
            model, model_found = {"provider": entry.get("provider", ""), "modelId": entry.get("modelId", "")}, True
        elif kind == "message" and not model_found and (entry.get("message") or {}).get("role") == "assistant":
            if materialize:
                materialize([entry])
            message = entry.get("message") or {}
            model, model_found = {"provider": message.get("provider", ""), "modelId": message.get("model", "")}, True
        elif kind == "compaction" and compaction_index < 0:
            compaction_index = index
        if model_found and thinking is not None and compaction_index >= 0:
            break

    messages: list[Message] = []
    if compaction_index >= 0:
        compaction = path[compaction_index]
        messages.append(
            compaction_summary_message(
                compaction.get("summary", ""), compaction.get("tokensBefore", 0), compaction.get("timestamp", "")
            )
        )
        first_kept = compaction.get("firstKeptEntryId")
        kept_start = next((i for i in range(compaction_index) if path[i].get("id") == first_kept), compaction_index)
        emitted = path[kept_start:compaction_index] + path[compaction_index + 1 :]
    else:
        emitted = path
    if materialize:
        materialize(emitted)
    for entry in emitted:
        _append(messages, entry)
    return SessionContext(messages=_without_orphan_results(messages), thinking_level=thinking or "off", model=model)


def _without_orphan_results(messages: list[Message]) -> list[Message]:
    """Drop tool results whose call is not earlier on the path (a damaged file lost it): every provider
    refuses a tool result without its call, and the context must never start with one."""
    calls: set[str] = set()
    kept: list[Message] = []
    for message in messages:
        if not isinstance(message, dict):
            kept.append(message)
            continue
        role = message.get("role")
        if role == "assistant":
            calls.update(str(block.get("id")) for block in message.get("content") or []
                         if isinstance(block, dict) and block.get("type") == "toolCall")
        elif role == "toolResult" and str(message.get("toolCallId")) not in calls:
            continue
        kept.append(message)
    return kept


def _append(messages: list[Message], entry: Entry) -> None:
    message = entry_message(entry)
    if message is not None:
        messages.append(message)
