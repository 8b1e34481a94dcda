"""entry_renderer in tmux: /status-card draws a card from a session entry, on resume too; the model never sees it."""

from __future__ import annotations

import json

import pytest

from pi_core.testing.fake_server import Reply
from pi_core.testing.tmux import tmux_available, tmux_pi

pytestmark = pytest.mark.skipif(not tmux_available(), reason="tmux is not installed")


def test_status_cards(example) -> None:
    with tmux_pi(example, "entry-renderer") as tui:
        tui.start("entry_renderer")
        tui.tmux.wait_for("(fake) fake-model")
        example.server.add(Reply(text="first reply"))
        tui.command("hello")
        tui.tmux.wait_for("first reply")
        tui.command("/status-card deployed v2")
        tui.tmux.wait_for("[status] deployed v2")
        example.server.add(Reply(text="second reply"))
        tui.command("and now")
        tui.tmux.wait_for("second reply")
        assert "deployed v2" not in json.dumps(example.server.requests[-1].body)
        tui.tmux.keys("C-d")
        tui.tmux.wait_for("EXITED=0")
        tui.start("entry_renderer", "--continue")
        screen = tui.tmux.wait_for("and now", visible=False)
        replay = screen.split("EXITED=0")[-1]
        assert replay.index("first reply") < replay.index("[status] deployed v2") < replay.index("and now")
