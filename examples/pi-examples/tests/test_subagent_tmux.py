"""subagent in the interactive UI: the running child streams into the tool row, the finished result shows the
child's status, its usage line, and (Ctrl+O) the task and the final output drawn as Markdown. One child."""

from __future__ import annotations

from typing import Any

import pytest

from pi_core.testing.fake_server import RecordedRequest, Reply
from pi_core.testing.tmux import tmux_available, tmux_pi

pytestmark = pytest.mark.skipif(not tmux_available(), reason="tmux is not installed")


def test_result_rows_and_expanded_markdown(example: Any) -> None:
    agents = example.home / "agents"
    agents.mkdir()
    (agents / "scout.md").write_text("---\nname: scout\ndescription: test scout\n---\n\nYou are SCOUT-TUI.\n")
    parent = [Reply(tool_calls=[("subagent", {"agent": "scout", "task": "map the parser"})]), Reply(text="thanks")]

    def respond(request: RecordedRequest) -> Reply:
        system = "".join(block.get("text", "") for block in request.body.get("system") or [])
        if "SCOUT-TUI" in system:  # the child: slow enough to be seen running
            return Reply(text="## Parser map\n\n- `parser.py` holds **tokenize**", stall_after=1, stall_s=2)
        return parent.pop(0)

    example.server.responder = respond
    with tmux_pi(example, "subagent") as tui:
        tmux = tui.tmux
        tui.start("subagent")
        tmux.wait_for("(fake) fake-model")
        tui.command("delegate it")
        running = tmux.wait_for("[running]", 60)
        assert "subagent scout [user]" in running and "map the parser" in running
        screen = tmux.wait_for("thanks", 90)
        row = [line.strip() for line in screen[screen.index("✓ scout (user)"):].splitlines() if line.strip()][:4]
        assert row == [  # collapsed: the child's text as it wrote it, then its usage
            "✓ scout (user)", "## Parser map", "- `parser.py` holds **tokenize**",
            "1 turn ↑10 ↓5 $0.0001 ctx:15 fake/fake-model"]
        tmux.keys("C-o")
        expanded = tmux.wait_for("─── Task ───", 30)
        output = [line.strip() for line in expanded[expanded.rindex("─── Output ───"):].splitlines() if line.strip()]
        assert output[1:4] == [
            "Parser map", "• parser.py holds tokenize", "1 turn ↑10 ↓5 $0.0001 ctx:15 fake/fake-model"]
