"""confirm_destructive in the interactive UI (tmux): /new asks first, and "No" keeps the conversation."""

from __future__ import annotations

import pytest

from pi_core.testing.fake_script import Reply
from pi_core.testing.tmux import tmux_available, tmux_pi

pytestmark = pytest.mark.skipif(not tmux_available(), reason="tmux is not installed")


def test_new_asks_and_no_keeps_the_transcript(example) -> None:
    example.server.add(Reply(text="the first answer"))
    with tmux_pi(example, "confirm-destructive") as tui:
        tui.start("confirm_destructive")
        tui.tmux.wait_for("(fake) fake-model")
        tui.command("hello")
        tui.tmux.wait_for("the first answer")
        tui.command("/new")
        screen = tui.tmux.wait_for("Clear session?", visible=True)
        assert "This will delete all messages in the current session." in screen
        tui.tmux.keys("Down")  # Yes, No
        tui.tmux.keys("Enter")
        tui.tmux.wait_for("Clear cancelled")
        assert "the first answer" in tui.tmux.visible()
