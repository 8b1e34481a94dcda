"""plan_mode in the interactive UI (tmux): Ctrl+Alt+P toggles plan mode, shown in the footer and a notice."""

from __future__ import annotations

import pytest

from pi_core.testing.fake_script import Reply
from pi_core.testing.tmux import tmux_available, tmux_pi

pytestmark = pytest.mark.skipif(not tmux_available(), reason="tmux is not installed")

CTRL_ALT_P = "\x1b\x10"  # Escape, then Ctrl+P: how a terminal sends Ctrl+Alt+P


def test_ctrl_alt_p_toggles_plan_mode(example) -> None:
    example.server.add(Reply(text="looked around"))
    with tmux_pi(example, "plan-mode") as tui:
        tui.start("plan_mode", "--no-session")
        tui.tmux.wait_for("(fake) fake-model")
        tui.tmux.raw(CTRL_ALT_P)
        tui.tmux.wait_for("Plan mode enabled. Built-in write tools disabled.")
        tui.tmux.wait_for("⏸ plan", visible=True)
        tui.command("look around")
        tui.tmux.wait_for("looked around")
        sent = example.server.requests[0].body
        assert [t["name"] for t in sent["tools"]] == ["read", "bash", "grep", "find", "ls"]
        assert "[PLAN MODE ACTIVE]" in str(sent["messages"])
        assert "[PLAN MODE ACTIVE]" not in tui.tmux.screen()  # the context message is not displayed

        tui.tmux.raw(CTRL_ALT_P)
        tui.tmux.wait_for("Plan mode disabled. Full access restored.")
        screen = tui.tmux.wait_gone("⏸ plan")
        assert "Plan mode enabled." in tui.tmux.screen() and "⏸" not in screen
