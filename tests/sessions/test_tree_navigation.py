"""/tree navigation and branch summaries (docs/sessions.md#tree-navigation)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from session_builders import assistant, tool_call, tool_result, user
from test_compaction import MODEL, FakeSummarizer

from pi_core.compaction.branch_summary import navigate_tree
from pi_core.sessions import SessionError, SessionManager


def session(tmp_path: Path) -> tuple[SessionManager, list[str]]:
    sm = SessionManager.in_memory(str(tmp_path))
    ids = [
        sm.append_message(user("start")),
        sm.append_message(assistant("r1")),
        sm.append_message(user("try the risky way")),
        sm.append_message(assistant("editing", tool_calls=[tool_call("c1", "edit", path="src/x.py")])),
        sm.append_message(tool_result("c1", "edit", "done")),
    ]
    return sm, ids


def test_navigating_to_user_message_returns_text_and_moves_to_parent(tmp_path: Path) -> None:
    sm, ids = session(tmp_path)
    result = asyncio.run(navigate_tree(sm, ids[2]))
    assert result.editor_text == "try the risky way" and sm.leaf_id == ids[1] and result.summary_entry is None
    assert [m["role"] for m in sm.build_session_context().messages] == ["user", "assistant"]
    assert asyncio.run(navigate_tree(sm, ids[1])).new_leaf_id == ids[1]  # same target: no-op
    asyncio.run(navigate_tree(sm, ids[0]))
    assert sm.leaf_id is None and sm.build_session_context().messages == []
    with pytest.raises(SessionError, match="Entry nope not found"):
        asyncio.run(navigate_tree(sm, "nope"))


def test_summary_attaches_to_new_leaf_with_label(tmp_path: Path) -> None:
    sm, ids = session(tmp_path)
    fake = FakeSummarizer("## Goal\nrisky attempt")
    result = asyncio.run(navigate_tree(sm, ids[2], summarize=True, model=MODEL, summarizer=fake, label="tried"))
    entry = result.summary_entry
    assert entry["type"] == "branch_summary" and entry["parentId"] == ids[1] and entry["fromId"] == ids[1]
    assert entry["summary"].startswith(
        "The user explored a different conversation branch before returning here.\nSummary of that exploration:\n\n"
        "## Goal\nrisky attempt")
    assert entry["summary"].endswith("<modified-files>\nsrc/x.py\n</modified-files>")
    assert entry["details"] == {"readFiles": [], "modifiedFiles": ["src/x.py"]}
    assert sm.get_label(entry["id"]) == "tried"
    prompt = fake.prompt()
    # the target itself is the common ancestor: only what came after it is summarised, tool results left out
    assert prompt.startswith("<conversation>\n[Assistant]: editing\n\n[Assistant tool calls]: edit(path=\"src/x.py\")\n</conversation>")
    assert fake.calls[0][2].max_tokens == 2048
    ctx = sm.build_session_context().messages
    assert ctx[-1]["role"] == "branchSummary"
    with pytest.raises(SessionError, match="No model available for summarization"):
        asyncio.run(navigate_tree(sm, ids[0], summarize=True))


def test_navigation_in_file_session_appends_only(tmp_path: Path) -> None:
    sm = SessionManager.create(str(tmp_path), tmp_path / "s")
    a = sm.append_message(user("q"))
    sm.append_message(assistant("a"))
    before = sm.session_file.read_bytes()
    asyncio.run(navigate_tree(sm, a, summarize=True, model=MODEL, summarizer=FakeSummarizer()))
    assert sm.session_file.read_bytes().startswith(before)
    reopened = SessionManager.open(sm.session_file)
    assert reopened.leaf_entry()["type"] == "branch_summary" and reopened.leaf_entry()["fromId"] == "root"
