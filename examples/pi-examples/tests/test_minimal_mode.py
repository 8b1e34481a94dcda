"""minimal_mode in tmux: tool rows are their call line only (find adds a count); Ctrl+O shows the output."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from pi_examples.minimal_mode import MinimalMode

from pi_core import ToolResult
from pi_core.testing.fake_server import Reply
from pi_core.testing.tmux import tmux_available, tmux_pi
from pi_core.types import TextContent
from pi_core.ui import PlainTheme


class Marking(PlainTheme):
    """Colours shown as ``<colour:text>``, so a test sees which theme drew a row."""

    def fg(self, color: str, text: str) -> str:
        return f"<{color}:{text}>"


def test_the_rows_use_the_theme_of_their_own_session() -> None:
    marked, plain = MinimalMode(), MinimalMode()
    marked.pi_session_start(SimpleNamespace(ui=SimpleNamespace(theme=Marking())), "startup")  # type: ignore[arg-type]
    draw = {r.tool_name: r for r in marked.pi_renderers()}
    assert draw["ls"].call({"path": "src", "limit": 5}) == "<toolTitle:ls> <accent:src><toolOutput: (limit 5)>"
    assert draw["grep"].call({"pattern": "x", "glob": "*.py", "limit": 2}) == (
        "<toolTitle:grep> <accent:/x/><toolOutput: in .><toolOutput: (*.py)><toolOutput: limit 2>")
    listing = ToolResult(content=[TextContent(text="a.py\nb.py\n")])
    assert draw["find"].result(listing, False, False) == "<muted: → 2 files>"
    assert {r.tool_name: r for r in plain.pi_renderers()}["ls"].call({"path": "src"}) == "ls src"


@pytest.mark.skipif(not tmux_available(), reason="tmux is not installed")
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
