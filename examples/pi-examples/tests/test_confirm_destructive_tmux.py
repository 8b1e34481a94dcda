"""confirm_destructive in the interactive UI (tmux): /new asks first, and "No" keeps the conversation."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pi_core.testing.fake_script import Reply
from tests.interactive.tmux_kit import pi_rig

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")


def test_new_asks_and_no_keeps_the_transcript(tmp_path: Path) -> None:
    with pi_rig(tmp_path, "confirm-destructive") as rig:
        rig.server.add(Reply(text="the first answer"))
        rig.start("-e", "plugin:confirm_destructive")
        rig.tmux.wait_for("fake-model")
        rig.command("hello")
        rig.tmux.wait_for("the first answer")
        rig.command("/new")
        screen = rig.tmux.wait_for("Clear session?")
        assert "This will delete all messages in the current session." in screen
        rig.tmux.keys("Down")  # Yes, No
        rig.tmux.keys("Enter")
        rig.tmux.wait_for("Clear cancelled")
        assert "the first answer" in rig.tmux.visible()
