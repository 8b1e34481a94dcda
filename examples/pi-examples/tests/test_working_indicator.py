"""working_indicator in tmux: /working-indicator switches the streaming indicator (dot, none, ...)."""

from __future__ import annotations

import pytest

from pi_core.testing.fake_server import Reply
from pi_core.testing.tmux import tmux_available, tmux_pi

pytestmark = pytest.mark.skipif(not tmux_available(), reason="tmux is not installed")


def working_row(tui, example, name: str) -> str:
    """Start a run held by a gate file; return the working row's line; let the run finish."""
    gate = example.cwd / f"go-{name}"
    example.server.add(Reply(tool_calls=[("bash", {"command": f"while [ ! -f {gate.name} ]; do sleep 0.05; done"})]),
                       Reply(text=f"{name} done"))
    tui.command(name)
    screen = tui.tmux.wait_for("Working…", visible=True)
    row = next(line for line in screen.splitlines() if "Working…" in line)
    gate.write_text("")
    tui.tmux.wait_for(f"{name} done")
    return row


def test_indicator_modes(example) -> None:
    with tmux_pi(example, "working-indicator") as tui:
        tui.start("working_indicator")
        tui.tmux.wait_for("Indicator: custom spinner", visible=True)
        assert working_row(tui, example, "spin").strip()[0] in "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
        tui.command("/working-indicator dot")
        tui.tmux.wait_for("Working indicator set to: static dot")
        assert working_row(tui, example, "dotted").strip().startswith("● Working…")
        tui.command("/working-indicator none")
        tui.tmux.wait_for("Indicator: hidden", visible=True)
        assert working_row(tui, example, "bare").strip().startswith("Working…")
        tui.command("/working-indicator sideways")
        tui.tmux.wait_for("Usage: /working-indicator [dot|pulse|none|spinner|reset]")
        tui.command("/working-indicator")
        tui.tmux.wait_for("Working indicator: hidden")
