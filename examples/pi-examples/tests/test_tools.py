"""tools: the selection made in /tools applies at once, is saved on the branch and restored by the next process."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pi_examples import tools as example_tools

from pi_core.testing.fake_script import Reply
from pi_core.testing.tmux import tmux_available, tmux_pi
from pi_core.tui import strip_ansi
from pi_core.ui import PlainTheme


def sent_tools(example, request: int) -> list[str]:
    return sorted(t["name"] for t in example.server.requests[request].body.get("tools", []))


def test_a_saved_selection_is_restored_from_the_branch(example) -> None:
    example.server.add(Reply(text="hi"))
    assert example.run("tools", "-p", "hello").returncode == 0
    assert "bash" in sent_tools(example, 0)
    # what /tools writes when the user switches everything but read and grep off
    session = next(example.home.rglob("*.jsonl"))
    last = json.loads(session.read_text().splitlines()[-1])
    entry = {"type": "custom", "customType": "tools-config", "data": {"enabledTools": ["read", "grep", "gone"]},
             "id": "t00l5cfg", "parentId": last["id"], "timestamp": last["timestamp"]}
    session.write_text(session.read_text() + json.dumps(entry) + "\n")
    example.server.add(Reply(text="again"))
    again = example.run("tools", "-p", "--continue", "hello again")
    assert again.returncode == 0, again.stderr
    assert sent_tools(example, 1) == ["grep", "read"]  # "gone" no longer exists: dropped


def test_tools_command_needs_the_interactive_ui(example) -> None:
    client = example.rpc("tools", "--no-session")
    client.request("prompt", message="/tools")
    notice = client.wait_for_event(lambda e: e.get("method") == "notify")
    assert notice["message"] == "/tools requires TUI mode" and notice["notifyType"] == "error"


class Tool:
    def __init__(self, name: str) -> None:
        self.name = name


class Ctx:
    """The context methods the panel uses, recording what it did."""

    def __init__(self) -> None:
        self.active: list[str] = ["read", "bash"]
        self.entries: list[tuple[str, Any]] = []

    def get_all_tools(self) -> list[Tool]:
        return [Tool("read"), Tool("bash"), Tool("grep")]

    def set_active_tools(self, names: list[str]) -> None:
        self.active = list(names)

    def append_entry(self, custom_type: str, data: Any) -> str:
        self.entries.append((custom_type, data))
        return "id"


def test_the_panel_switches_tools_and_saves_each_change() -> None:
    ctx = Ctx()
    state = example_tools.ToolsState({"read", "bash"})
    closed: list[object] = []
    panel = example_tools.ToolsPanel(ctx, state, None, PlainTheme(), None, closed.append)  # type: ignore[arg-type]
    lines = [strip_ansi(line).rstrip() for line in panel.render(50)]
    assert lines[0] == "Tool Configuration" and "→ read  enabled" in lines and "  grep  disabled" in lines
    panel.handle_input("\x1b[B")  # bash
    panel.handle_input("\r")
    assert ctx.active == ["read"] and ctx.entries[-1] == ("tools-config", {"enabledTools": ["read"]})
    panel.handle_input("\x1b[B")  # grep
    panel.handle_input(" ")
    assert ctx.active == ["grep", "read"] and len(ctx.entries) == 2
    assert "  bash  disabled" in [strip_ansi(line).rstrip() for line in panel.render(50)]
    panel.handle_input("\x1b")
    assert closed == [None]


@pytest.mark.skipif(not tmux_available(), reason="tmux is not installed")
def test_the_tools_panel_switches_a_tool_off_for_the_next_request(example) -> None:
    example.server.add(Reply(text="Without read."))
    with tmux_pi(example, "tools") as tui:
        tui.start("tools", "--no-session")
        tui.tmux.wait_for("(fake) fake-model")
        tui.command("/tools")
        screen = tui.tmux.wait_for("Tool Configuration", visible=True)
        rows = [" ".join(line.split()) for line in screen.splitlines()]
        assert "→ read enabled" in rows and "grep disabled" in rows and "bash enabled" in rows
        tui.tmux.keys("Enter")  # the cursor starts on read
        tui.tmux.wait_for("→readdisabled", visible=True, flat=True)
        tui.tmux.keys("Escape")
        tui.tmux.wait_gone("Tool Configuration")
        tui.command("go on")
        tui.tmux.wait_for("Without read.")
    names = sent_tools(example, 0)
    assert "read" not in names and "bash" in names
