"""tmux: a raising ``pi_before_tool_call`` is a notice naming the plugin in the interactive UI, and the model is
told the call was blocked (issue 15: a raising hook is reported as an extension error in every mode)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from tmux_kit import pi_rig

from pi_core.testing.fake_server import Reply

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

GATE = '''
from pi_core import hookimpl


@hookimpl
def pi_before_tool_call(call):
    raise RuntimeError("gate exploded")
'''


def test_a_raising_gate_is_a_notice_and_blocks_the_call(tmp_path: Path) -> None:
    with pi_rig(tmp_path, "ext-error") as rig:
        (rig.cwd / "gate.py").write_text(GATE)
        (rig.cwd / "notes.txt").write_text("secret plans\n")
        rig.server.add(Reply(tool_calls=[("read", {"path": "notes.txt"})]), Reply(text="blocked, understood"))
        rig.start("-e", "gate.py", "--no-session")
        rig.tmux.wait_for("gate (explicit)")  # started: the editor takes the keys
        rig.command("read my notes")
        rig.tmux.wait_for("blocked, understood")
        screen = rig.tmux.wait_for(f"Plugin error ({rig.cwd / 'gate.py'}, before_tool_call): gate exploded",
                                   flat=True)  # the notice wraps at the path
        assert "secret plans" not in screen
        result = rig.server.requests[1].body["messages"][-1]["content"][0]
        assert result["is_error"] and "plugin \"gate\" failed while checking it" in str(result["content"])
