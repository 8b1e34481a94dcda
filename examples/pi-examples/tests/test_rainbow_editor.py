"""rainbow_editor in tmux: "ultrathink" in the editor is drawn letter by letter in the rainbow's colours."""

from __future__ import annotations

import pytest

from pi_core.testing.tmux import tmux_available, tmux_pi

pytestmark = pytest.mark.skipif(not tmux_available(), reason="tmux is not installed")


def test_ultrathink_glows(example) -> None:
    with tmux_pi(example, "rainbow-editor") as tui:
        tui.start("rainbow_editor")
        tui.tmux.wait_for("(fake) fake-model")
        tui.tmux.type("please ultrathink")
        tui.tmux.wait_for("please ultrathink", visible=True)
        screen = tui.tmux.wait_for("38;2;121;157;207", visible=True, colours=True)  # blue: the 5th letter
        assert "38;2;228;186;103" in screen or "38;2;141;192;122" in screen  # and more colours beside it
        assert "please" in screen.replace("\x1b[0m", "")
