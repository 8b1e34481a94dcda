"""Byte compatibility with Pi's files, JS number formatting, v1→v3 migration and the real Pi fixtures."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from session_builders import FIXTURES, assistant, user

from pi_core.sessions import SessionManager
from pi_core.sessions.jsonfmt import js_dumps, js_loads, js_number
from pi_core.sessions.migrate import migrate_records

FIXTURE_NAMES = ["before-compaction.jsonl", "large-session.jsonl"]


@pytest.mark.parametrize(
    ("value", "text"),
    [(0.0, "0"), (1.0, "1"), (5e-06, "0.000005"), (3.75e-05, "0.0000375"), (1e-07, "1e-7"), (1e21, "1e+21"),
     (1e20, "100000000000000000000"), (0.1, "0.1"), (-0.5, "-0.5"), (2.0**60, "1152921504606847000"),
     (0.013875000000000002, "0.013875000000000002"), (float("nan"), "null"), (float("inf"), "null")],
)
def test_js_number(value: float, text: str) -> None:
    assert js_number(value) == text


def test_js_dumps_matches_json_stringify_escapes() -> None:
    assert js_dumps({"a": "é\u2028\x01\"\\\n", "b": [1, 2.0, None, True], "c": {}}) == (
        '{"a":"é\u2028\\u0001\\"\\\\\\n","b":[1,2,null,true],"c":{}}'
    )
    assert js_dumps("\ud800") == '"\\ud800"'  # a lone surrogate is escaped, the line stays valid UTF-8


@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_every_pi_line_round_trips_byte_for_byte(name: str) -> None:
    for line in (FIXTURES / name).read_text(encoding="utf-8").splitlines():
        assert js_dumps(js_loads(line)) == line


def test_v1_migration_gives_ids_linear_chain_and_version_3() -> None:
    records = [
        {"type": "session", "id": "s", "timestamp": "t", "cwd": "/"},
        {"type": "message", "timestamp": "t", "message": user("a")},
        {"type": "message", "timestamp": "t", "message": assistant("b")},
        {"type": "compaction", "timestamp": "t", "summary": "S", "firstKeptEntryIndex": 2, "tokensBefore": 5},
        {"type": "message", "timestamp": "t", "message": {"role": "hookMessage", "content": "x", "timestamp": 1}},
    ]
    assert migrate_records(records) is True
    assert records[0]["version"] == 3
    ids = [r["id"] for r in records[1:]]
    assert all(re.fullmatch(r"[0-9a-f]{8}", i) for i in ids) and len(set(ids)) == 4
    assert [r["parentId"] for r in records[1:]] == [None, *ids[:-1]]
    assert records[3]["firstKeptEntryId"] == ids[1] and "firstKeptEntryIndex" not in records[3]
    # Pi appends the new keys to the existing objects: keep that order
    assert list(records[3]) == ["type", "timestamp", "summary", "tokensBefore", "id", "parentId", "firstKeptEntryId"]
    assert records[4]["message"]["role"] == "custom"
    assert migrate_records(records) is False


def test_v2_ids_are_kept() -> None:
    records = [
        {"type": "session", "version": 2, "id": "s", "timestamp": "t", "cwd": "/"},
        {"type": "message", "id": "abc", "parentId": None, "timestamp": "t", "message": user("a")},
    ]
    assert migrate_records(records) is True
    assert records[1]["id"] == "abc" and records[0]["version"] == 3


def original_version(name: str) -> int:
    header = json.loads((FIXTURES / name).read_text().splitlines()[0])
    return header.get("version", 1)


@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_pi_fixtures_migrate_open_build_and_append(name: str, tmp_path: Path) -> None:
    path = tmp_path / name
    shutil.copy(FIXTURES / name, path)
    original = [json.loads(line) for line in (FIXTURES / name).read_text().splitlines()]
    sm = SessionManager.open(path)
    (backup,) = tmp_path.glob(f"{name}.v*.bak")  # the original, kept before the rewrite (issue 17 item 9)
    assert backup.read_bytes() == (FIXTURES / name).read_bytes()
    expected = f"Migrated {path} from session version {original_version(name)}; the original is kept as {backup}"
    assert sm.warnings == [expected]
    assert sm.cwd == "/Users/badlogic/workspaces/pi-mono"
    migrated = [json.loads(line) for line in path.read_text().splitlines()]
    assert migrated[0]["version"] == 3 and len(migrated) == len(original)
    assert not list(tmp_path.glob(".*.tmp"))  # written through a temp file and renamed
    ctx = sm.build_session_context()
    originals = [r["message"] for r in original if r["type"] == "message"]
    if any(r["type"] == "compaction" for r in original):
        assert ctx.messages[0]["role"] == "compactionSummary"
        assert ctx.messages[0]["summary"] == [r for r in original if r["type"] == "compaction"][-1]["summary"]
        assert ctx.messages[-1] == originals[-1] and len(ctx.messages) < len(originals)
    else:
        assert ctx.messages == originals  # the same conversation, in order
    expected_model = None
    for record in original[1:]:
        if record["type"] == "model_change":
            expected_model = {"provider": record["provider"], "modelId": record["modelId"]}
        elif record["type"] == "message" and record["message"]["role"] == "assistant":
            expected_model = {"provider": record["message"]["provider"], "modelId": record["message"]["model"]}
    assert ctx.model == expected_model
    before = path.read_bytes()
    new_id = sm.append_message(user("appended by pi"))
    assert path.read_bytes().startswith(before)  # append-only after migration
    reopened = SessionManager.open(path)
    assert reopened.leaf_id == new_id and reopened.get_entry(new_id)["parentId"] == migrated[-1]["id"]
    assert reopened.build_session_context().messages[-1]["content"] == "appended by pi"


def test_migrated_fixture_compaction_points_at_the_kept_entry(tmp_path: Path) -> None:
    path = tmp_path / "bc.jsonl"
    shutil.copy(FIXTURES / "before-compaction.jsonl", path)
    original = (FIXTURES / "before-compaction.jsonl").read_text().splitlines()
    sm = SessionManager.open(path)
    entries = sm.get_entries()
    for index, line in enumerate(original):
        record = json.loads(line)
        if record["type"] == "compaction":
            migrated = entries[index - 1]
            assert migrated["firstKeptEntryId"] == entries[record["firstKeptEntryIndex"] - 1]["id"]


def test_session_ids_are_canonical_time_ordered_uuid7s() -> None:
    import time
    import uuid

    from pi_core.sessions.format import uuid7

    before = int(time.time() * 1000)
    ids = [uuid7() for _ in range(200)]
    for text in ids:
        parsed = uuid.UUID(text)
        assert str(parsed) == text and parsed.version == 7 and parsed.variant == uuid.RFC_4122
        assert before <= parsed.int >> 80 <= int(time.time() * 1000)
    assert len(set(ids)) == len(ids)
