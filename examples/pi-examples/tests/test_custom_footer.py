"""custom_footer in tmux: /footer swaps pi's footer for tokens, cost, model and git branch, and back."""

from __future__ import annotations

import pytest

from pi_core.testing.fake_server import Reply
from pi_core.testing.tmux import tmux_available, tmux_pi

pytestmark = pytest.mark.skipif(not tmux_available(), reason="tmux is not installed")


def test_footer_toggle(example) -> None:
    (example.cwd / ".git").mkdir()
    (example.cwd / ".git" / "HEAD").write_text("ref: refs/heads/topic\n")
    with tmux_pi(example, "custom-footer") as tui:
        tui.start("custom_footer")
        tui.tmux.wait_for("(fake) fake-model")
        example.server.add(Reply(text="counted"))
        tui.command("count my tokens")
        tui.tmux.wait_for("counted")
        tui.command("/footer")
        tui.tmux.wait_for("Custom footer enabled")
        screen = tui.tmux.wait_for("fake-model (topic)", visible=True)
        footer = next(line for line in screen.splitlines() if "fake-model (topic)" in line)
        assert footer.startswith("↑") and "$0.000" in footer and "(fake) fake-model" not in screen
        (example.cwd / ".git" / "HEAD").write_text("ref: refs/heads/other\n")
        tui.tmux.wait_for("fake-model (other)", visible=True)  # on_branch_change redraws it
        tui.command("/footer")
        tui.tmux.wait_for("Default footer restored")
        tui.tmux.wait_for("(fake) fake-model", visible=True)
