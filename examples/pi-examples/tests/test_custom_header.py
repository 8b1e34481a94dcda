"""custom_header in tmux: the mascot replaces pi's header; /builtin-header brings pi's back."""

from __future__ import annotations

import pytest

from pi_core.testing.tmux import tmux_available, tmux_pi

pytestmark = pytest.mark.skipif(not tmux_available(), reason="tmux is not installed")


def test_mascot_header(example) -> None:
    with tmux_pi(example, "custom-header") as tui:
        tui.start("custom_header")
        screen = tui.tmux.wait_for("shitty coding agent v")
        assert "█" * 14 in screen and "esc interrupt" not in screen
        tui.command("/builtin-header")
        tui.tmux.wait_for("Built-in header restored")
        tui.tmux.wait_for("esc interrupt")
