"""plan_mode in the interactive UI (tmux): Ctrl+Alt+P toggles plan mode (footer status and a notice), the plan
is offered in a picker and its progress shows in a widget above the editor."""

from __future__ import annotations

import pytest

from pi_core.testing.fake_script import Reply
from pi_core.testing.tmux import tmux_available, tmux_pi

pytestmark = pytest.mark.skipif(not tmux_available(), reason="tmux is not installed")

CTRL_ALT_P = "\x1b\x10"  # Escape, then Ctrl+P: how a terminal sends Ctrl+Alt+P


def test_ctrl_alt_p_then_a_plan_executed_with_its_widget(example) -> None:
    example.server.add(Reply(text="Plan:\n1. Read the file a.txt carefully\n2. Fix the bug in b.py"),
                       Reply(text="Read it. [DONE:1]"), Reply(text="working on b"))
    with tmux_pi(example, "plan-mode") as tui:
        tui.start("plan_mode", "--no-session")
        tui.tmux.wait_for("(fake) fake-model")
        tui.tmux.raw(CTRL_ALT_P)
        tui.tmux.wait_for("Plan mode enabled. Built-in write tools disabled.")
        tui.tmux.wait_for("⏸ plan", visible=True)
        tui.command("make a plan")
        picker = tui.tmux.wait_for("Plan mode - what next?", visible=True)
        assert "→ Execute the plan (track progress)" in picker and "Refine the plan" in picker
        sent = example.server.requests[0].body
        assert [t["name"] for t in sent["tools"]] == ["read", "bash", "grep", "find", "ls"]
        assert "[PLAN MODE ACTIVE]" in str(sent["messages"])
        assert "[PLAN MODE ACTIVE]" not in tui.tmux.screen()  # the context message is not displayed
        tui.tmux.keys("Enter")

        tui.tmux.wait_for("📋 1/2", visible=True)
        tui.tmux.wait_for("working on b")
        # the screen in which the widget is drawn: a snapshot taken right after "working on b" can fall
        # between two redraws and hold no widget line at all
        screen = tui.tmux.wait_for("☐ Fix the bug in b.py", visible=True)
        widget = [line.rstrip() for line in screen.splitlines() if line.startswith(("☐", "☑"))]
        assert widget == ["☑ File a.txt carefully", "☐ Fix the bug in b.py"]
        assert [t["name"] for t in example.server.requests[2].body["tools"]] == ["read", "bash", "edit", "write"]

        tui.tmux.raw(CTRL_ALT_P)  # back into plan mode: the execution is dropped
        tui.tmux.wait_for("⏸ plan", visible=True)
        tui.tmux.raw(CTRL_ALT_P)
        tui.tmux.wait_for("Plan mode disabled. Full access restored.")
        screen = tui.tmux.wait_gone("⏸ plan")
        assert "📋" not in screen
        assert not [line for line in screen.splitlines() if line.startswith(("☐", "☑"))]  # the widget is gone
