"""Bring session records from older format versions up to version 3 (docs/sessions.md#migrations)."""

from __future__ import annotations

from pi_core.sessions.format import CURRENT_SESSION_VERSION, Entry, new_entry_id


def file_version(records: list[Entry]) -> int:
    header = next((r for r in records if r.get("type") == "session"), None)
    version = header.get("version") if header else None
    return version if isinstance(version, int) else 1


def _v1_to_v2(records: list[Entry]) -> None:
    """Give every entry an id and chain them linearly in file order.

    New keys are appended to the existing dicts, which is where Pi's migration puts them too, so a
    file migrated here has the same key order as one migrated by Pi.
    """
    taken: set[str] = set()
    previous: str | None = None
    for record in records:
        if record.get("type") == "session":
            record["version"] = 2
            continue
        record["id"] = new_entry_id(taken)
        taken.add(record["id"])
        record["parentId"] = previous
        previous = record["id"]
        if record.get("type") == "compaction" and "firstKeptEntryIndex" in record:
            index = record["firstKeptEntryIndex"]
            # The legacy index counts lines with the header at 0, the same indexing as `records`.
            if isinstance(index, int) and 0 <= index < len(records):
                target = records[index]
                if target.get("type") != "session" and "id" in target:
                    record["firstKeptEntryId"] = target["id"]
            del record["firstKeptEntryIndex"]


def _v2_to_v3(records: list[Entry]) -> None:
    for record in records:
        if record.get("type") == "session":
            record["version"] = 3
        elif record.get("type") == "message":
            message = record.get("message")
            if isinstance(message, dict) and message.get("role") == "hookMessage":
                message["role"] = "custom"


def migrate_records(records: list[Entry]) -> bool:
    """Migrate header and entries in place. Returns True when anything changed (file must be rewritten)."""
    version = file_version(records)
    if version >= CURRENT_SESSION_VERSION:
        return False
    if version < 2:
        _v1_to_v2(records)
    if version < 3:
        _v2_to_v3(records)
    return True
