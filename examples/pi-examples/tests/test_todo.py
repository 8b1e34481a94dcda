"""todo: the model keeps a list through the tool, the list is rebuilt from the session's branch, /todos shows it."""

from __future__ import annotations

import asyncio

import pytest
from pi_examples.todo import Todo, TodoListComponent, render_result

from pi_core import ToolResult
from pi_core.testing.fake_script import Reply
from pi_core.testing.tmux import tmux_available, tmux_pi
from pi_core.tui import strip_ansi
from pi_core.types import TextContent
from pi_core.ui import PlainTheme

needs_tmux = pytest.mark.skipif(not tmux_available(), reason="tmux is not installed")


def test_the_list_lives_in_the_session_and_comes_back_with_continue(example) -> None:
    example.server.add(Reply(tool_calls=[("todo", {"action": "add", "text": "milk"})]),
                       Reply(tool_calls=[("todo", {"action": "add", "text": "eggs"})]),
                       Reply(tool_calls=[("todo", {"action": "toggle", "id": 1})]),
                       Reply(tool_calls=[("todo", {"action": "list"})]),
                       Reply(text="done"))
    first = example.run("todo", "-p", "plan my shopping")
    assert first.returncode == 0, first.stderr
    assert example.tool_results(1) == ["Added todo #1: milk"]
    assert example.tool_results(3) == ["Todo #1 completed"]
    assert example.tool_results(4) == ["[x] #1: milk\n[ ] #2: eggs"]
    # a new process: the list is rebuilt from the tool results stored in the session
    example.server.add(Reply(tool_calls=[("todo", {"action": "list"})]), Reply(text="ok"))
    again = example.run("todo", "-p", "--continue", "list them")
    assert again.returncode == 0, again.stderr
    assert example.tool_results(6) == ["[x] #1: milk\n[ ] #2: eggs"]


def test_bad_calls_are_answered_not_raised(example) -> None:
    example.server.add(Reply(tool_calls=[("todo", {"action": "add"})]),
                       Reply(tool_calls=[("todo", {"action": "toggle", "id": 7})]),
                       Reply(tool_calls=[("todo", {"action": "clear"})]), Reply(text="ok"))
    done = example.run("todo", "--no-session", "-p", "go")
    assert done.returncode == 0, done.stderr
    assert example.tool_results(1) == ["Error: text required for add"]
    assert example.tool_results(2) == ["Todo #7 not found"]
    assert example.tool_results(3) == ["Cleared 0 todos"]


def test_todos_command_needs_the_interactive_ui(example) -> None:
    client = example.rpc("todo", "--no-session")
    client.request("prompt", message="/todos")
    notice = client.wait_for_event(lambda e: e.get("method") == "notify")
    assert notice["message"] == "/todos requires interactive mode" and notice["notifyType"] == "error"


def test_the_todos_panel_counts_and_closes_on_escape() -> None:
    closed: list[bool] = []
    panel = TodoListComponent([Todo(1, "milk", True), Todo(2, "eggs")], PlainTheme(), lambda: closed.append(True))
    lines = [strip_ansi(line) for line in panel.render(40)]
    assert "  1/2 completed" in lines and "  ✓ #1 milk" in lines and "  ○ #2 eggs" in lines
    assert lines[1].startswith("─── Todos ─") and all(len(line) <= 40 for line in lines)
    panel.handle_input("x")
    assert not closed
    panel.handle_input("\x1b")
    assert closed == [True]
    empty = [strip_ansi(line) for line in TodoListComponent([], PlainTheme(), lambda: None).render(60)]
    assert "  No todos yet. Ask the agent to add some!" in empty


def test_tool_rows_say_what_changed() -> None:
    result = ToolResult(content=[TextContent(text="Added todo #1: milk")],
                        details={"action": "add", "todos": [{"id": 1, "text": "milk", "done": False}], "nextId": 2})
    assert strip_ansi(render_result(result, False, False, PlainTheme())) == "✓ Added #1 milk"


@needs_tmux
def test_the_tool_rows_and_the_todos_panel_on_screen(example) -> None:
    example.server.add(Reply(tool_calls=[("todo", {"action": "add", "text": "milk"})]),
                       Reply(tool_calls=[("todo", {"action": "add", "text": "eggs"})]),
                       Reply(tool_calls=[("todo", {"action": "toggle", "id": 1})]), Reply(text="Listed."))
    with tmux_pi(example, "todos") as tui:
        tui.start("todo", "--no-session")
        tui.tmux.wait_for("(fake) fake-model")
        tui.command("plan my shopping")
        screen = tui.tmux.wait_for("Listed.")
        assert "✓ Added #1 milk" in screen and "✓ Added #2 eggs" in screen  # the example's tool rows
        tui.command("/todos")
        screen = tui.tmux.wait_for("1/2 completed", visible=True)
        rows = [line.strip() for line in screen.splitlines()]
        assert "✓ #1 milk" in rows and "○ #2 eggs" in rows and any(r.startswith("─── Todos ─") for r in rows)
        tui.tmux.keys("Escape")
        tui.tmux.wait_gone("1/2 completed")


def test_two_sessions_in_one_process_keep_their_own_lists(example, sdk_sessions) -> None:
    asyncio.run(_two_sessions(example, sdk_sessions))


async def _two_sessions(example, sdk_sessions) -> None:
    example.server.add(Reply(tool_calls=[("todo", {"action": "add", "text": "milk"})]), Reply(text="added"),
                       Reply(tool_calls=[("todo", {"action": "list"})]), Reply(text="listed"),
                       Reply(tool_calls=[("todo", {"action": "list"})]), Reply(text="listed"))
    async with sdk_sessions("todo") as (first, second):
        await first.prompt("add milk")
        await second.prompt("list")
        await first.prompt("list")
    assert example.tool_results(1) == ["Added todo #1: milk"]
    assert example.tool_results(3) == ["No todos"]
    assert example.tool_results(5) == ["[ ] #1: milk"]
