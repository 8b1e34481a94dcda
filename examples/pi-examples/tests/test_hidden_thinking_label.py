"""hidden_thinking_label in tmux: hidden thinking reads "Pondering...", /thinking-label changes and resets it."""

from __future__ import annotations

import pytest

from pi_core.testing.fake_server import Reply
from pi_core.testing.tmux import tmux_available, tmux_pi

pytestmark = pytest.mark.skipif(not tmux_available(), reason="tmux is not installed")


def test_label_of_hidden_thinking(example) -> None:
    (example.home / "settings.json").write_text('{"hideThinkingBlock": true}')
    with tmux_pi(example, "thinking-label") as tui:
        tui.start("hidden_thinking_label")
        tui.tmux.wait_for("(fake) fake-model")
        example.server.add(Reply(thinking="secret musings", text="first answer"))
        tui.command("think")
        screen = tui.tmux.wait_for("first answer")
        assert "Pondering..." in screen and "secret musings" not in screen
        tui.command("/thinking-label Chewing on it")
        tui.tmux.wait_for("Hidden thinking label set to: Chewing on it")
        example.server.add(Reply(thinking="more musings", text="second answer"))
        tui.command("again")
        screen = tui.tmux.wait_for("second answer")
        assert "Chewing on it" in screen.split("Hidden thinking label set to")[-1]
        tui.command("/thinking-label")
        tui.tmux.wait_for("Hidden thinking label reset to: Pondering...")
