"""widget_placement in tmux: one widget above the editor, one below it."""

from __future__ import annotations

import pytest

from pi_core.testing.tmux import tmux_available, tmux_pi

pytestmark = pytest.mark.skipif(not tmux_available(), reason="tmux is not installed")


def test_widgets_around_the_editor(example) -> None:
    with tmux_pi(example, "widgets") as tui:
        tui.start("widget_placement")
        screen = tui.tmux.wait_for("Below editor widget", visible=True)
        lines = screen.splitlines()
        above = next(i for i, line in enumerate(lines) if "Above editor widget" in line)
        below = next(i for i, line in enumerate(lines) if "Below editor widget" in line)
        rules = [i for i, line in enumerate(lines) if line.startswith("─" * 20)]
        assert above < rules[0] and rules[-1] < below  # the editor sits between them
