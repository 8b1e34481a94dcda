"""working_message_test in tmux: the brown "Working... (custom)" message and dot show on every run."""

from __future__ import annotations

import pytest

from pi_core.testing.fake_server import Reply
from pi_core.testing.tmux import tmux_available, tmux_pi

pytestmark = pytest.mark.skipif(not tmux_available(), reason="tmux is not installed")


def test_custom_working_row_on_every_run(example) -> None:
    with tmux_pi(example, "working-message") as tui:
        tui.start("working_message_test")
        tui.tmux.wait_for("(fake) fake-model")
        for run in ("one", "two"):
            gate = example.cwd / f"go-{run}"
            example.server.add(Reply(tool_calls=[("bash", {"command": f"while [ ! -f {gate.name} ]; do sleep 0.05; done"})]),
                               Reply(text=f"run {run} done"))
            tui.command(f"run {run}")
            screen = tui.tmux.wait_for("● Working... (custom)", visible=True)
            assert "Working…" not in screen
            tui.tmux.wait_for("38;2;155;86;63", visible=True, colours=True)  # brown, as the plugin coloured it
            gate.write_text("")
            tui.tmux.wait_for(f"run {run} done")
