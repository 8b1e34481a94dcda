"""status_line in tmux: the footer status says Ready, then follows each turn."""

from __future__ import annotations

import pytest

from pi_core.testing.fake_server import Reply
from pi_core.testing.tmux import tmux_available, tmux_pi

pytestmark = pytest.mark.skipif(not tmux_available(), reason="tmux is not installed")


def test_status_follows_the_turns(example) -> None:
    with tmux_pi(example, "status-line") as tui:
        tui.start("status_line")
        tui.tmux.wait_for("Ready", visible=True)
        example.server.add(Reply(tool_calls=[("bash", {"command": "echo one"})]), Reply(text="all done"))
        tui.command("go")
        tui.tmux.wait_for("all done")
        tui.tmux.wait_for("✓ Turn 2 complete", visible=True)  # a tool call and the answer: two turns
        assert "Ready" not in tui.tmux.visible()
