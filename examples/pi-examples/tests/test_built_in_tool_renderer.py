"""built_in_tool_renderer in tmux: compact rows for read, bash, edit and write; Ctrl+O opens read's lines."""

from __future__ import annotations

import pytest

from pi_core.testing.fake_server import Reply
from pi_core.testing.tmux import tmux_available, tmux_pi

pytestmark = pytest.mark.skipif(not tmux_available(), reason="tmux is not installed")


def test_compact_tool_rows(example) -> None:
    (example.cwd / "notes.txt").write_text("alpha line\nbeta line\n")
    with tmux_pi(example, "tool-renderer") as tui:
        tmux = tui.tmux
        tui.start("built_in_tool_renderer")
        tmux.wait_for("(fake) fake-model")
        example.server.add(
            Reply(tool_calls=[("read", {"path": "notes.txt"})]),
            Reply(tool_calls=[("bash", {"command": "echo hi; echo there"})]),
            Reply(tool_calls=[("edit", {"path": "notes.txt", "edits": [{"oldText": "beta", "newText": "gamma"}]})]),
            Reply(tool_calls=[("write", {"path": "new.txt", "content": "one\ntwo\n"})]),
            Reply(text="all tools ran"))
        tui.command("use the tools")
        screen = tmux.wait_for("all tools ran")
        assert "read notes.txt" in screen and "3 lines" in screen and "alpha line" not in screen
        assert "$ echo hi; echo there" in screen and "done (2 lines)" in screen
        assert "edit notes.txt" in screen and "+1 / -1" in screen
        assert "write new.txt (3 lines)" in screen and "Written" in screen
        assert (example.cwd / "notes.txt").read_text() == "alpha line\ngamma line\n"  # pi's tools ran
        tmux.keys("C-o")  # expanded: the transcript is drawn again with the lines
        tmux.wait_for("alpha line")


def test_a_running_tool_is_drawn_as_partial(example) -> None:
    gated = "echo started; while [ ! -f gate ]; do sleep 0.05; done"
    with tmux_pi(example, "tool-renderer-partial") as tui:
        tmux = tui.tmux
        tui.start("built_in_tool_renderer")
        tmux.wait_for("(fake) fake-model")
        example.server.add(Reply(tool_calls=[("bash", {"command": gated})]), Reply(text="finished"))
        tui.command("run it")
        screen = tmux.wait_for("Running...")  # the partial result (its "started" output) gets the partial text
        assert f"$ {gated}" in screen and "done (" not in screen
        (example.cwd / "gate").write_text("")
        screen = tmux.wait_for("finished")
        assert "done (1 lines)" in screen and "Running..." not in screen
