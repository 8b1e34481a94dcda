"""border_status_editor in tmux: model, thinking level, context and branch on the editor's bottom border, a
spinner on its top border while the agent works; pi's footer and working row are gone."""

from __future__ import annotations

import pytest

from pi_core.testing.fake_server import Reply
from pi_core.testing.tmux import tmux_available, tmux_pi

pytestmark = pytest.mark.skipif(not tmux_available(), reason="tmux is not installed")


def test_status_in_the_borders(example, git_repo) -> None:
    git_repo(example.cwd)
    with tmux_pi(example, "border-status") as tui:
        tui.start("border_status_editor", width=220)  # room for the whole temp path and the branch
        screen = tui.tmux.wait_for("fake/fake-model · off", visible=True)
        bottom = next(line for line in screen.splitlines() if "fake/fake-model · off" in line)
        assert bottom.startswith("─") and "ctx " in bottom and "(fake) fake-model" not in screen
        tui.tmux.wait_for("(main)", visible=True)
        example.server.add(Reply(tool_calls=[("bash", {"command": "while [ ! -f go ]; do sleep 0.05; done"})]),
                           Reply(text="bordered"))
        tui.command("work")
        tui.tmux.wait_for("$ while", visible=True)
        top = next(line for line in tui.tmux.visible().splitlines() if line.startswith("─ ") and "⠀" not in line)
        assert top[2] in "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏" and "Working…" not in tui.tmux.visible()
        (example.cwd / "go").write_text("")
        tui.tmux.wait_for("bordered")
