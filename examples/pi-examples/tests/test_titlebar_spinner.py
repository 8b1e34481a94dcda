"""titlebar_spinner in tmux: a braille frame leads the terminal title while the agent works, then goes."""

from __future__ import annotations

import pytest

from pi_core.testing.fake_server import Reply
from pi_core.testing.tmux import tmux_available, tmux_pi

pytestmark = pytest.mark.skipif(not tmux_available(), reason="tmux is not installed")


def test_spinner_in_the_title(example) -> None:
    with tmux_pi(example, "titlebar") as tui:
        tui.start("titlebar_spinner")
        tui.tmux.wait_for("(fake) fake-model")
        example.server.add(Reply(tool_calls=[("bash", {"command": "while [ ! -f go ]; do sleep 0.05; done"})]),
                           Reply(text="finished"))
        tui.command("work")
        title = tui.tmux.wait_title(" π - project")
        assert title[0] in "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏", title
        (example.cwd / "go").write_text("")
        tui.tmux.wait_for("finished")
        tui.tmux.wait_title("π - project", exact=True)  # settled: the spinner stopped
