"""message_renderer in tmux: /status sends a custom message drawn by the plugin's renderer, again on resume."""

from __future__ import annotations

import pytest

from pi_core.testing.fake_server import Reply
from pi_core.testing.tmux import tmux_available, tmux_pi

pytestmark = pytest.mark.skipif(not tmux_available(), reason="tmux is not installed")


def test_status_messages(example) -> None:
    with tmux_pi(example, "message-renderer") as tui:
        tui.start("message_renderer")
        tui.tmux.wait_for("(fake) fake-model")
        example.server.add(Reply(text="noted"))
        tui.command("watch the disk")  # a session file is written once there is a reply
        tui.tmux.wait_for("noted")
        tui.command("/status warn disk almost full")
        tui.tmux.wait_for("[WARN] disk almost full")
        tui.command("/status all good")
        screen = tui.tmux.wait_for("[INFO] all good")
        assert screen.count("[WARN] disk almost full") == 1  # drawn once, from its message event
        assert "38;2;" in tui.tmux.screen(colours=True)
        tui.tmux.keys("C-d")
        tui.tmux.wait_for("EXITED=0")
        tui.start("message_renderer", "--continue")
        tui.tmux.wait_for("(fake) fake-model")
        screen = tui.tmux.wait_for("[INFO] all good")  # drawn again from the session file
        assert screen.index("[WARN] disk almost full") < screen.index("[INFO] all good")
