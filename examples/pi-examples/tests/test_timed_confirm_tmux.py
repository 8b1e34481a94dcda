"""timed_confirm in the interactive UI (tmux): the dialog takes an answer, and counts down in its title."""

from __future__ import annotations

import pytest

from pi_core.testing.tmux import tmux_available, tmux_pi

pytestmark = pytest.mark.skipif(not tmux_available(), reason="tmux is not installed")


def test_timed_select_is_answered_in_the_picker(example) -> None:
    with tmux_pi(example, "timed-select") as tui:
        tui.start("timed_confirm", "--no-session")
        tui.tmux.wait_for("(fake) fake-model")
        tui.command("/timed-select")
        tui.tmux.wait_for("Option C", visible=True)
        tui.tmux.keys("Down")
        tui.tmux.keys("Enter")
        tui.tmux.wait_for("Selected: Option B")


def test_timed_confirm_counts_down_in_its_title(example) -> None:
    with tmux_pi(example, "timed-confirm") as tui:
        tui.start("timed_confirm", "--no-session")
        tui.tmux.wait_for("(fake) fake-model")
        tui.command("/timed")
        # Pi appends the seconds to the whole heading, which for confirm is "<title>\n<message>"
        screen = tui.tmux.wait_for("Confirm? (4s)", limit=4, visible=True)
        assert "Timed Confirmation" in [line.strip() for line in screen.splitlines()]
        tui.tmux.wait_for("Confirm? (3s)", limit=4, visible=True)
        tui.tmux.keys("Enter")  # the picker starts on "Yes"
        tui.tmux.wait_for("Confirmed by user!")
