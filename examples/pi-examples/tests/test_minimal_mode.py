"""minimal_mode in tmux: tool rows are their call line only (find adds a count); Ctrl+O shows the output."""

from __future__ import annotations

import pytest

from pi_core.testing.fake_server import Reply
from pi_core.testing.tmux import tmux_available, tmux_pi

pytestmark = pytest.mark.skipif(not tmux_available(), reason="tmux is not installed")


def test_call_lines_only(example) -> None:
    (example.cwd / "notes.txt").write_text("first secret line\nsecond line\n")
    for name in ("a.py", "b.py", "c.py"):
        (example.cwd / name).write_text("")
    with tmux_pi(example, "minimal-mode") as tui:
        tmux = tui.tmux
        tui.start("minimal_mode", "--tools", "read,bash,find")
        tmux.wait_for("(fake) fake-model")
        example.server.add(Reply(tool_calls=[("read", {"path": "notes.txt", "offset": 1, "limit": 2})]),
                           Reply(tool_calls=[("find", {"pattern": "*.py"})]),
                           Reply(tool_calls=[("bash", {"command": "echo shown-when-expanded"})]),
                           Reply(text="minimal done"))
        tui.command("look around")
        screen = tmux.wait_for("minimal done")
        assert "read notes.txt:1-2" in screen and "first secret line" not in screen
        assert "find *.py in ." in screen and "→ 3 files" in screen and "a.py" not in screen
        assert "$ echo shown-when-expanded" in screen and screen.count("shown-when-expanded") == 1
        tmux.keys("C-o")
        tmux.wait_for("first secret line")
        tmux.wait_for("a.py", visible=True)
        assert tmux.visible().count("shown-when-expanded") == 2  # the call line and now its output
