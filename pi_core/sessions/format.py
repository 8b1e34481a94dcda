"""Session file records: header and entry dicts in Pi's key order, ids and timestamps.

Entries are plain dicts (parsed JSON, key order preserved) so that a line read from a Pi file is
written back byte for byte; ``pi_core.types.message_from_json`` converts a message when typed access
is wanted. Every constructor lays its keys out in the order Pi's session manager writes them.
"""

from __future__ import annotations

import os
import time
from collections.abc import Container
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TypeAlias

from pi_core.sessions.jsonfmt import js_dumps
from pi_core.toolkit.redact import redact

if TYPE_CHECKING:
    from pi_core.types import AgentMessage

CURRENT_SESSION_VERSION = 3

ENTRY_TYPES: frozenset[str] = frozenset(
    {
        "message",
        "model_change",
        "thinking_level_change",
        "compaction",
        "branch_summary",
        "custom",
        "custom_message",
        "label",
        "session_info",
        "usage",
    }
)

Entry = dict[str, Any]  # open: a session entry, Pi's JSONL record
# A message as the session code takes it: a pi_core.types model, or the dict of Pi's JSON (bashExecution has no model).
MessageLike: TypeAlias = "AgentMessage | dict[str, Any]"  # open: or a message as Pi's JSON


def iso_now() -> str:
    """Current UTC time like JS ``new Date().toISOString()``: ``2026-03-15T10:00:00.000Z``."""
    return iso_from_ms(int(time.time() * 1000))


def iso_from_ms(ms: int) -> str:
    global _LAST_SECOND
    second, last = ms // 1000, _LAST_SECOND  # one read: another thread may replace it meanwhile
    if last[0] != second:  # every entry is stamped: a second's date and time are formatted once
        last = _LAST_SECOND = (second, datetime.fromtimestamp(second, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S."))
    return f"{last[1]}{ms % 1000:03d}Z"


_LAST_SECOND: tuple[int | None, str] = (None, "")


def ms_from_iso(text: str) -> int | None:
    """Unix ms of an ISO-8601 timestamp, or None when it does not parse (like JS ``NaN``)."""
    try:
        dt = datetime.fromisoformat(text)
    except (ValueError, AttributeError):
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return round(dt.timestamp() * 1000)


def uuid7() -> str:
    """A time-ordered UUIDv7 (48-bit Unix ms, version 7, RFC 4122 variant, random rest)."""
    ms = int(time.time() * 1000) & ((1 << 48) - 1)
    rand = int.from_bytes(os.urandom(10), "big")
    value = (ms << 80) | (0x7 << 76) | ((rand >> 62) & 0xFFF) << 64 | (0b10 << 62) | (rand & ((1 << 62) - 1))
    digits = f"{value:032x}"  # str(uuid.UUID(int=value)), without importing uuid (and with it platform)
    return f"{digits[:8]}-{digits[8:12]}-{digits[12:16]}-{digits[16:20]}-{digits[20:]}"


def new_entry_id(taken: Container[str]) -> str:
    """8 lowercase hex characters, unique among ``taken``; a full UUID after 100 collisions."""
    for _ in range(100):
        candidate = os.urandom(4).hex()  # secrets.token_hex(4), without importing secrets (hmac, hashlib)
        if candidate not in taken:
            return candidate
    import uuid

    return str(uuid.uuid4())


def file_timestamp(iso: str) -> str:
    """The file-name form of an ISO timestamp: ``:`` and ``.`` replaced by ``-``."""
    return iso.replace(":", "-").replace(".", "-")


def make_header(session_id: str, timestamp: str, cwd: str, parent_session: str | None = None) -> Entry:
    header: Entry = {
        "type": "session",
        "version": CURRENT_SESSION_VERSION,
        "id": session_id,
        "timestamp": timestamp,
        "cwd": cwd,
    }
    if parent_session is not None:
        header["parentSession"] = parent_session
    return header


def _base(entry_type: str, entry_id: str, parent_id: str | None, timestamp: str) -> Entry:
    return {"type": entry_type, "id": entry_id, "parentId": parent_id, "timestamp": timestamp}


def _put(entry: Entry, key: str, value: Any) -> None:
    """Set ``key`` unless the value is None: JSON.stringify drops undefined fields."""
    if value is not None:
        entry[key] = value


def message_entry(entry_id: str, parent_id: str | None, timestamp: str, message: dict[str, Any]) -> Entry:  # open: a message as Pi's JSON
    entry = _base("message", entry_id, parent_id, timestamp)
    entry["message"] = message
    return entry


def model_change_entry(entry_id: str, parent_id: str | None, timestamp: str, provider: str, model_id: str) -> Entry:
    entry = _base("model_change", entry_id, parent_id, timestamp)
    entry["provider"] = provider
    entry["modelId"] = model_id
    return entry


def thinking_level_entry(entry_id: str, parent_id: str | None, timestamp: str, level: str) -> Entry:
    entry = _base("thinking_level_change", entry_id, parent_id, timestamp)
    entry["thinkingLevel"] = level
    return entry


def compaction_entry(
    entry_id: str,
    parent_id: str | None,
    timestamp: str,
    summary: str,
    first_kept_entry_id: str,
    tokens_before: int,
    details: Any = None,  # open: plugin-defined details, stored in the session JSON
    from_hook: bool | None = None,
    usage: dict[str, Any] | None = None,  # open: the provider's usage numbers, JSON
) -> Entry:
    entry = _base("compaction", entry_id, parent_id, timestamp)
    entry["summary"] = summary
    entry["firstKeptEntryId"] = first_kept_entry_id
    entry["tokensBefore"] = tokens_before
    _put(entry, "details", details)
    _put(entry, "fromHook", from_hook)
    _put(entry, "usage", usage)
    return entry


def branch_summary_entry(
    entry_id: str,
    parent_id: str | None,
    timestamp: str,
    from_id: str,
    summary: str,
    details: Any = None,  # open: plugin-defined details, stored in the session JSON
    from_hook: bool | None = None,
) -> Entry:
    entry = _base("branch_summary", entry_id, parent_id, timestamp)
    entry["fromId"] = from_id
    entry["summary"] = summary
    _put(entry, "details", details)
    _put(entry, "fromHook", from_hook)
    return entry


def usage_entry(entry_id: str, parent_id: str | None, timestamp: str, kind: str, provider: str, model: str,
                usage: dict[str, Any], note: str | None = None) -> Entry:  # open: the provider's usage numbers, JSON
    """Usage billed to the session outside its context (``kind`` ``cache_warm``: a cache refresh)."""
    entry = _base("usage", entry_id, parent_id, timestamp)
    entry.update({"kind": kind, "provider": provider, "model": model, "usage": usage})
    _put(entry, "note", note)
    return entry


def custom_entry(entry_id: str, parent_id: str | None, timestamp: str, custom_type: str, data: Any = None) -> Entry:  # open: plugin-defined data, stored in the session JSON
    # Pi builds this object with its own fields first and the tree fields last.
    entry: Entry = {"type": "custom", "customType": custom_type}
    _put(entry, "data", data)
    entry.update({"id": entry_id, "parentId": parent_id, "timestamp": timestamp})
    return entry


def custom_message_entry(
    entry_id: str,
    parent_id: str | None,
    timestamp: str,
    custom_type: str,
    content: str | list[dict[str, Any]],  # open: content blocks as Pi's JSON
    display: bool,
    details: Any = None,  # open: plugin-defined details, stored in the session JSON
) -> Entry:
    entry: Entry = {"type": "custom_message", "customType": custom_type, "content": content, "display": display}
    _put(entry, "details", details)
    entry.update({"id": entry_id, "parentId": parent_id, "timestamp": timestamp})
    return entry


def label_entry(entry_id: str, parent_id: str | None, timestamp: str, target_id: str, label: str | None) -> Entry:
    entry = _base("label", entry_id, parent_id, timestamp)
    entry["targetId"] = target_id
    _put(entry, "label", label)
    return entry


def session_info_entry(entry_id: str, parent_id: str | None, timestamp: str, name: str) -> Entry:
    entry = _base("session_info", entry_id, parent_id, timestamp)
    entry["name"] = name.strip()
    return entry


def serialize_line(record: Entry) -> str:
    """One JSONL line (with its LF) for a header or entry; secrets are redacted (``pi_core.toolkit.redact``)."""
    return redact(js_dumps(record)) + "\n"


def message_to_dict(message: MessageLike) -> dict[str, Any]:  # open: a message as Pi's JSON
    """A message as a plain dict: dicts pass through, pi_core.types models go through ``to_json()``."""
    if isinstance(message, dict):
        return message
    to_json = getattr(message, "to_json", None)
    data = to_json() if callable(to_json) else None
    if isinstance(data, dict):
        return data
    raise TypeError(f"not a message: {type(message).__name__}")
