"""SessionManager: persistence rules, appends, branches, labels, forks and loading (docs/sessions.md)."""

from __future__ import annotations

import json
import os
import re
import time
import uuid
from pathlib import Path

import pytest
from session_builders import assistant, user

from pi_core.sessions import SessionError, SessionManager
from pi_core.sessions.store import (
    encode_cwd,
    find_most_recent_session,
    load_entries_from_file,
)


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_encode_cwd() -> None:
    assert encode_cwd("/home/u/my-proj") == "--home-u-my-proj--"
    assert encode_cwd("C:\\work\\app") == "--C--work-app--"


def test_new_session_name_header_and_default_dir(agent_dir: Path, tmp_path: Path) -> None:
    sm = SessionManager.create(str(tmp_path / "proj"))
    sm.append_model_change("anthropic", "claude")
    sm.append_thinking_level_change("off")
    sm.append_message(user("hi"))
    path = sm.session_file
    assert path is not None and not path.exists()  # nothing before the first assistant message
    assert path.parent == agent_dir / "sessions" / encode_cwd(str(tmp_path / "proj"))
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z_" + re.escape(sm.session_id) + r"\.jsonl", path.name)
    assert uuid.UUID(sm.session_id).version == 7
    sm.append_message(assistant("hello"))
    records = lines(path)
    assert [r["type"] for r in records] == ["session", "model_change", "thinking_level_change", "message", "message"]
    assert list(records[0]) == ["type", "version", "id", "timestamp", "cwd"]
    assert records[0]["version"] == 3 and records[0]["id"] == sm.session_id
    sm.append_message(user("more"))
    assert len(lines(path)) == 6  # appended immediately after the first assistant message


def test_appends_chain_parent_ids_and_branch_creates_siblings(tmp_path: Path) -> None:
    sm = SessionManager.in_memory(str(tmp_path))
    a = sm.append_message(user("1"))
    b = sm.append_message(assistant("2"))
    c = sm.append_message(user("3"))
    assert [e["parentId"] for e in sm.get_entries()] == [None, a, b]
    assert sm.leaf_id == c and re.fullmatch(r"[0-9a-f]{8}", c)
    sm.branch(b)
    d = sm.append_message(user("3b"))
    assert sm.get_entry(d)["parentId"] == b
    assert {e["id"] for e in sm.get_children(b)} == {c, d}
    with pytest.raises(SessionError, match="Entry nope not found"):
        sm.branch("nope")
    s = sm.branch_with_summary(a, "went elsewhere")
    summary = sm.get_entry(s)
    assert summary["parentId"] == a and summary["fromId"] == a and sm.leaf_id == s
    sm.reset_leaf()
    root = sm.append_message(user("new root"))
    assert sm.get_entry(root)["parentId"] is None
    root_summary = sm.branch_with_summary(None, "from root")
    assert sm.get_entry(root_summary)["fromId"] == "root"


def test_custom_session_id_and_entry_key_order(tmp_path: Path) -> None:
    sm = SessionManager.create(str(tmp_path), tmp_path / "s")
    sm.new_session(id="my-fixed-id")
    sm.append_message(user("q"))
    sm.append_message(assistant("a"))
    sm.append_custom_entry("ext", {"count": 1})
    sm.append_custom_message_entry("ext", "Injected", True)
    sm.append_session_info("  My name  ")
    sm.append_compaction("S", sm.get_entries()[0]["id"], 10, {"readFiles": [], "modifiedFiles": []}, False)
    records = lines(sm.session_file)
    assert records[0]["id"] == "my-fixed-id" and "my-fixed-id" in sm.session_file.name
    assert list(records[3]) == ["type", "customType", "data", "id", "parentId", "timestamp"]
    assert list(records[4]) == ["type", "customType", "content", "display", "id", "parentId", "timestamp"]
    assert records[5]["name"] == "My name" and sm.session_name == "My name"
    assert list(records[6]) == ["type", "id", "parentId", "timestamp", "summary", "firstKeptEntryId",
                                "tokensBefore", "details", "fromHook"]


def test_summary_messages_are_refused_as_message_entries(tmp_path: Path) -> None:
    sm = SessionManager.in_memory(str(tmp_path))
    with pytest.raises(SessionError):
        sm.append_message({"role": "compactionSummary", "summary": "x", "tokensBefore": 1, "timestamp": 1})


def test_labels(tmp_path: Path) -> None:
    sm = SessionManager.in_memory(str(tmp_path))
    a = sm.append_message(user("1"))
    b = sm.append_message(assistant("2"))
    sm.append_label_change(a, "first")
    assert sm.get_label(a) == "first"
    sm.append_label_change(a, "second")
    assert sm.get_label(a) == "second"
    sm.append_label_change(a, None)
    assert sm.get_label(a) is None
    sm.append_label_change(b, "kept")
    with pytest.raises(SessionError, match="Entry zzz not found"):
        sm.append_label_change("zzz", "x")
    tree = sm.get_tree()
    node = tree[0]
    assert node.entry["id"] == a and node.children[0].label == "kept"
    assert all(m["role"] != "label" for m in sm.build_session_context().messages)
    assert len(sm.build_session_context().messages) == 2


def test_labels_survive_branch_extraction_only_on_the_path(tmp_path: Path) -> None:
    sm = SessionManager.in_memory(str(tmp_path))
    a = sm.append_message(user("1"))
    b = sm.append_message(assistant("2"))
    c = sm.append_message(user("3"))
    sm.append_label_change(a, "on-path")
    sm.append_label_change(c, "off-path")
    sm.create_branched_session(b)
    entries = sm.get_entries()
    labels = [e for e in entries if e["type"] == "label"]
    assert [(e["targetId"], e["label"]) for e in labels] == [(a, "on-path")]
    assert labels[0]["parentId"] == b and sm.get_label(a) == "on-path" and sm.get_label(c) is None


def test_get_tree_orders_children_and_relinks_orphans(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    records = [
        {"type": "session", "version": 3, "id": "sid", "timestamp": "2025-01-01T00:00:00.000Z", "cwd": "/x"},
        {"type": "message", "id": "a", "parentId": None, "timestamp": "2025-01-01T00:00:01.000Z", "message": user("1")},
        {"type": "message", "id": "c", "parentId": "a", "timestamp": "2025-01-01T00:00:05.000Z", "message": assistant()},
        {"type": "message", "id": "b", "parentId": "a", "timestamp": "2025-01-01T00:00:02.000Z", "message": assistant()},
        {"type": "message", "id": "o", "parentId": "gone", "timestamp": "2025-01-01T00:00:03.000Z", "message": user("x")},
        {"type": "message", "id": "s", "parentId": "s", "timestamp": "2025-01-01T00:00:04.000Z", "message": user("y")},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    sm = SessionManager.open(path)
    roots = sm.get_tree()
    # An orphan (its parent is not in the file, or is itself) follows the entry before it, so no history is
    # cut off (docs/sessions.md#damaged-files; Pi 0.73.1 made each a root of its own).
    assert [r.entry["id"] for r in roots] == ["a"]
    assert [c.entry["id"] for c in roots[0].children] == ["b", "c"]
    (b,) = [c for c in roots[0].children if c.entry["id"] == "b"]
    assert [c.entry["id"] for c in b.children] == ["o"] and [c.entry["id"] for c in b.children[0].children] == ["s"]
    assert sm.leaf_id == "s"
    assert [w.split(" names a parent")[0] for w in sm.warnings] == [f"Entry o in {path} (line 5)",
                                                                    f"Entry s in {path} (line 6)"]


def test_load_entries_from_bad_files(tmp_path: Path) -> None:
    assert load_entries_from_file(tmp_path / "missing.jsonl") == []
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert load_entries_from_file(empty) == []
    no_header = tmp_path / "noheader.jsonl"
    no_header.write_text('{"type":"message","id":"a"}\n')
    assert load_entries_from_file(no_header) == []
    malformed = tmp_path / "malformed.jsonl"
    malformed.write_text('{"type":"session","id":"x","timestamp":"t","cwd":"/"}\nnot json\n{"type":"label","id":"b"}\n')
    assert [r["type"] for r in load_entries_from_file(malformed)] == ["session", "label"]


def test_most_recent_session(tmp_path: Path) -> None:
    assert find_most_recent_session(tmp_path / "nope") is None
    assert find_most_recent_session(tmp_path) is None
    header = '{"type":"session","version":3,"id":"%s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/"}\n'
    old, new = tmp_path / "old.jsonl", tmp_path / "new.jsonl"
    old.write_text(header % "old")
    new.write_text(header % "new")
    (tmp_path / "newest.txt").write_text(header % "txt")
    (tmp_path / "bad.jsonl").write_text("garbage\n")
    now = time.time()
    os.utime(old, (now - 100, now - 100))
    os.utime(new, (now - 50, now - 50))
    os.utime(tmp_path / "bad.jsonl", (now, now))
    assert find_most_recent_session(tmp_path) == new
    sm = SessionManager.continue_recent("/", tmp_path)
    assert sm.session_id == "new"


def test_corrupted_file_is_restarted_with_one_header_and_backup(tmp_path: Path) -> None:
    path = tmp_path / "broken.jsonl"
    path.write_text("this is not a session\n")
    sm = SessionManager.open(path)
    records = lines(path)
    assert len(records) == 1 and records[0]["type"] == "session" and records[0]["id"] == sm.session_id
    assert sm.session_file == path.resolve()
    backups = list(tmp_path.glob("broken.jsonl.corrupt-*"))
    assert len(backups) == 1 and backups[0].read_text() == "this is not a session\n"
    assert SessionManager.open(path).session_id == sm.session_id
    sm.append_message(user("q"))
    sm.append_message(assistant("a"))
    assert [r["type"] for r in lines(path)] == ["session", "message", "message"]  # header not duplicated


def test_missing_path_becomes_new_session_at_that_path(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "chosen.jsonl"
    sm = SessionManager.open(path)
    assert sm.session_file == path.resolve() and not path.exists()
    sm.append_message(user("q"))
    sm.append_message(assistant("a"))
    assert lines(path)[0]["cwd"] == sm.cwd


def test_torn_last_line_is_skipped_with_warning_and_session_continues(tmp_path: Path) -> None:
    sm = SessionManager.create(str(tmp_path), tmp_path / "s")
    sm.append_message(user("q"))
    sm.append_message(assistant("a"))
    path = sm.session_file
    with open(path, "a") as fh:
        fh.write('{"type":"message","id":"deadbeef","parentId":"x","timestamp":"2025-')  # killed mid-write
    reopened = SessionManager.open(path)
    assert any("truncated last line" in w for w in reopened.warnings)
    assert len(reopened.get_entries()) == 2
    new_id = reopened.append_message(user("after crash"))
    reread = SessionManager.open(path)
    assert [e["id"] for e in reread.get_entries()][-1] == new_id
    assert reread.get_entry(new_id)["message"]["content"] == "after crash"
    assert "2025-" in path.read_text()  # the torn bytes are kept, never rewritten


def test_fork_from_user_message_defers_file_until_assistant(tmp_path: Path) -> None:
    sm = SessionManager.create(str(tmp_path), tmp_path / "s")
    first = sm.append_message(user("first question"))
    sm.append_message(assistant("answer"))
    old_file = sm.session_file
    result = sm.fork(first)
    assert result.selected_text == "first question"
    assert result.session_file is not None and result.session_file != old_file and not result.session_file.exists()
    assert sm.header["parentSession"] == str(old_file)
    sm.append_message(user("again"))
    sm.append_message(assistant("ok"))
    records = lines(result.session_file)
    assert [r["type"] for r in records].count("session") == 1
    assert len({r["id"] for r in records}) == len(records)


def test_fork_with_assistant_on_path_writes_immediately(tmp_path: Path) -> None:
    sm = SessionManager.create(str(tmp_path), tmp_path / "s")
    sm.append_message(user("q1"))
    sm.append_message(assistant("a1"))
    second = sm.append_message(user("q2"))
    sm.append_message(assistant("a2"))
    result = sm.fork(second)
    assert result.selected_text == "q2" and result.session_file.exists()
    assert [r.get("message", {}).get("role") for r in lines(result.session_file)[1:]] == ["user", "assistant"]
    with pytest.raises(SessionError, match="Invalid entry ID for forking"):
        sm.fork(sm.get_entries()[1]["id"])
    with pytest.raises(SessionError, match="Entry nope not found"):
        sm.create_branched_session("nope")


def test_fork_and_clone_in_memory(tmp_path: Path) -> None:
    sm = SessionManager.in_memory(str(tmp_path))
    a = sm.append_message(user("q1"))
    sm.append_message(assistant("a1"))
    b = sm.append_message(user("q2"))
    old_id = sm.session_id
    assert sm.fork(b).session_file is None
    assert sm.session_id != old_id and len(sm.get_entries()) == 2
    assert sm.clone() is None and len(sm.get_entries()) == 2
    sm.fork(a)
    assert sm.get_entries() == []
    with pytest.raises(SessionError, match="Cannot clone session: no current entry selected"):
        sm.clone()


def test_fork_from_copies_whole_tree_into_this_project(tmp_path: Path) -> None:
    src = SessionManager.create("/elsewhere", tmp_path / "other")
    a = src.append_message(user("q"))
    src.append_message(assistant("a"))
    src.branch(a)
    src.append_message(assistant("alt"))
    forked = SessionManager.fork_from(src.session_file, str(tmp_path / "here"), tmp_path / "mine")
    records = lines(forked.session_file)
    assert records[0]["cwd"] == str(tmp_path / "here") and records[0]["parentSession"] == str(src.session_file)
    assert records[0]["id"] != src.session_id
    assert records[1:] == lines(src.session_file)[1:]
    assert forked.session_file.parent == tmp_path / "mine"


def test_session_list_uses_message_times_and_first_text(tmp_path: Path) -> None:
    d = tmp_path / "s"
    sm = SessionManager.create(str(tmp_path), d)
    sm.append_message(user("hello there", ts=1_800_000_000_000))
    sm.append_message(assistant("hi", ts=1_800_000_005_000))
    sm.append_session_info("named")
    empty = SessionManager.create(str(tmp_path), d)
    empty.append_message(assistant("only"))
    infos = SessionManager.list(str(tmp_path), d)
    assert infos[0].id == sm.session_id
    info = infos[0]
    assert info.modified == 1_800_000_005_000 and info.message_count == 2 and info.first_message == "hello there"
    assert info.name == "named" and info.cwd == str(tmp_path) and info.all_messages_text == "hello there hi"
    assert infos[1].first_message == "(no messages)"


def test_lazily_loaded_entries_are_complete_wherever_they_surface(tmp_path: Path) -> None:
    sm = SessionManager.create(str(tmp_path), tmp_path / "s")
    ids = []
    for i in range(20):
        ids.append(sm.append_message(user(f"question {i}")))
        ids.append(sm.append_message(assistant(f"answer {i}", tool_calls=[{"type": "toolCall", "id": f"c{i}",
                                                                          "name": "read", "arguments": {"p": i}}])))
    original = sm.session_file.read_text()
    reopened = SessionManager.open(sm.session_file)
    assert reopened.get_entry(ids[5])["message"]["content"][0]["text"] == "answer 2"
    assert reopened.get_branch(ids[3])[-1]["message"]["content"][1]["arguments"] == {"p": 1}
    assert reopened.build_session_context().messages[-1]["content"][0]["text"] == "answer 19"
    assert reopened.build_session_context().model == {"provider": "anthropic", "modelId": "claude-test"}
    reopened.create_branched_session(ids[9])
    copied = lines(reopened.session_file)
    assert [r["message"] for r in copied[1:]] == [json.loads(line)["message"] for line in original.splitlines()[1:11]]
    again = SessionManager.open(sm.session_file)
    assert [e["message"] for e in again.get_entries()] == [json.loads(x)["message"] for x in original.splitlines()[1:]]
    assert sm.session_file.read_text() == original


def test_stray_session_files_move_into_their_project_dir(agent_dir: Path) -> None:
    from pi_core.sessions import migrate_stray_sessions

    agent_dir.mkdir(parents=True)
    stray = agent_dir / "2025-01-01T00-00-00-000Z_abc.jsonl"
    stray.write_text('{"type":"session","version":3,"id":"abc","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/w/p"}\n')
    (agent_dir / "notes.jsonl").write_text("not a session\n")
    moved = migrate_stray_sessions()
    assert moved == [agent_dir / "sessions" / "--w-p--" / stray.name] and moved[0].exists() and not stray.exists()
    assert (agent_dir / "notes.jsonl").exists()


def test_branch_has_thinking_level(tmp_path: Path) -> None:
    sm = SessionManager.in_memory(str(tmp_path))
    a = sm.append_message(user("q"))
    assert not sm.branch_has_thinking_level()
    sm.append_thinking_level_change("high")
    assert sm.branch_has_thinking_level()
    sm.branch(a)
    assert not sm.branch_has_thinking_level()


def test_picker_refuses_without_terminal(tmp_path: Path) -> None:
    from pi_core.sessions.picker import pick_session

    with pytest.raises(SessionError, match="--resume needs an interactive terminal"):
        pick_session(SessionManager.list(str(tmp_path)), lambda sessions: None)
