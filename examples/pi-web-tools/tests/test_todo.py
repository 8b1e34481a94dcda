"""todo: add, list and done, persisted in .pi/todo.json under the working directory."""

from __future__ import annotations

import json
from pathlib import Path

from pi_web_tools import todo

from pi_core.testing.fake_provider import reply
from pi_core.testing.kit import result_text


def test_add_list_done_round_trip(pi_plugin, pi_run_tool, tmp_path: Path) -> None:
    loaded = pi_plugin(todo)
    result, is_error = pi_run_tool(loaded, "todo", {"action": "add", "text": "write tests"})
    assert not is_error and result_text(result).startswith("Added task 1: write tests")
    pi_run_tool(loaded, "todo", {"action": "add", "text": "ship it"})
    result, _ = pi_run_tool(loaded, "todo", {"action": "done", "id": 1})
    assert result_text(result).startswith("Marked task 1 done")
    result, _ = pi_run_tool(loaded, "todo", {"action": "list"})
    assert result_text(result) == "1. [x] write tests\n2. [ ] ship it"
    stored = json.loads((tmp_path / ".pi" / "todo.json").read_text())
    assert [item["done"] for item in stored] == [True, False]


def test_mistakes_are_explained(pi_plugin, pi_run_tool, tmp_path: Path) -> None:
    loaded = pi_plugin(todo)
    result, is_error = pi_run_tool(loaded, "todo", {"action": "list"})
    assert not is_error and result_text(result) == "No tasks yet."
    result, is_error = pi_run_tool(loaded, "todo", {"action": "done", "id": 7})
    assert is_error and result_text(result) == "No task 7; existing task ids: none"
    result, is_error = pi_run_tool(loaded, "todo", {"action": "add"})
    assert is_error and result_text(result) == "action add needs a non-empty text"
    result, is_error = pi_run_tool(loaded, "todo", {"action": "archive"})
    assert is_error and result_text(result).startswith('Validation failed for tool "todo"')


def test_a_broken_store_is_reported_not_overwritten(pi_plugin, pi_run_tool, tmp_path: Path) -> None:
    store = tmp_path / ".pi" / "todo.json"
    store.parent.mkdir()
    store.write_text("{not json")
    result, is_error = pi_run_tool(pi_plugin(todo), "todo", {"action": "add", "text": "x"})
    assert is_error and "unreadable" in result_text(result)
    assert store.read_text() == "{not json"


def test_two_adds_in_one_turn_both_land(pi_plugin, pi_conversation, tmp_path: Path) -> None:
    convo = pi_conversation(pi_plugin(todo), [
        reply(tool_calls=[("todo", {"action": "add", "text": "a"}), ("todo", {"action": "add", "text": "b"})]),
        reply("done"),
    ], "plan")
    assert [r.is_error for r in convo.tool_results] == [False, False]
    assert [i["text"] for i in json.loads((tmp_path / ".pi" / "todo.json").read_text())] == ["a", "b"]
