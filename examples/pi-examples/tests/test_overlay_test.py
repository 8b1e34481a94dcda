"""overlay_test in tmux: /overlay-test floats the overlay, keys move and type in it, Enter/Escape close it."""

from __future__ import annotations

import pytest

from pi_core.testing.tmux import tmux_available, tmux_pi

pytestmark = pytest.mark.skipif(not tmux_available(), reason="tmux is not installed")


def test_overlay_moves_types_and_reports_the_pick(example) -> None:
    with tmux_pi(example, "overlay-test") as tui:
        tui.start("overlay_test")
        tui.tmux.wait_for("(fake) fake-model")
        tui.command("/overlay-test")
        screen = tui.tmux.wait_for("🧪 Overlay Test", visible=True)
        assert "▶ Search:" in screen and "─── Edge Cases (borders should align) ───" in screen
        assert "↑↓ navigate • type to input • Enter select • Esc cancel" in screen
        tui.tmux.keys("Down")
        tui.tmux.wait_for("▶ Run:", visible=True)
        tui.tmux.type("ls")
        tui.tmux.wait_for("Run: ls", visible=True)
        tui.tmux.keys("Enter")
        tui.tmux.wait_gone("🧪 Overlay Test")
        tui.tmux.wait_for('Run: "ls"', visible=True)


def test_escape_closes_without_a_notice(example) -> None:
    with tmux_pi(example, "overlay-test-esc") as tui:
        tui.start("overlay_test")
        tui.tmux.wait_for("(fake) fake-model")
        tui.command("/overlay-test")
        tui.tmux.wait_for("🧪 Overlay Test", visible=True)
        tui.tmux.keys("Down", "Down")
        tui.tmux.wait_for("▶ Settings", visible=True)
        tui.tmux.keys("Escape")
        screen = tui.tmux.wait_gone("🧪 Overlay Test")
        assert "Settings" not in screen
