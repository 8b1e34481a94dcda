"""rpc_demo's /rpc-editor in the interactive UI (tmux): ``ctx.ui.editor`` is a multi-line editor under its title."""

from __future__ import annotations

import pytest

from pi_core.testing.tmux import tmux_available, tmux_pi

pytestmark = pytest.mark.skipif(not tmux_available(), reason="tmux is not installed")


def test_rpc_editor_prefill_is_edited_as_three_lines(example) -> None:
    with tmux_pi(example, "rpc-editor") as tui:
        tui.start("rpc_demo", "--no-session")
        tui.tmux.wait_for("(fake) fake-model")
        tui.command("/rpc-editor")
        screen = tui.tmux.wait_for("enter submit", visible=True)
        rows = [line.strip() for line in screen.splitlines()]
        title = rows.index("Edit some text")
        assert [r for r in rows[title + 1:] if r.startswith("Line")] == ["Line 1", "Line 2", "Line 3"]
        assert "shift+enter/ctrl+j newline" in screen and "escape/ctrl+c cancel" in screen
        tui.tmux.keys("Up", "End")  # the cursor starts after "Line 3": one line up is "Line 2"
        tui.tmux.type(" edited")
        tui.tmux.keys("C-j")  # a new line, as Shift+Enter
        tui.tmux.type("Line 2b")
        screen = tui.tmux.wait_for("Line 2b", visible=True)
        rows = [line.strip() for line in screen.splitlines()]
        assert rows[rows.index("Line 2 edited") + 1:][:2] == ["Line 2b", "Line 3"]
        tui.tmux.keys("Enter")  # submits the text; it is not sent to the model
        tui.tmux.wait_for("Editor submitted (4 lines)")
        tui.tmux.wait_gone("Edit some text")

        tui.command("/rpc-editor")
        tui.tmux.wait_for("Edit some text", visible=True)
        tui.tmux.keys("Escape")
        tui.tmux.wait_for("Editor cancelled")
        assert example.server.requests == []
