"""permission_gate in the interactive UI (tmux): the picker asks, "No" blocks the command and the folder stays."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pi_core.testing.fake_script import Reply
from tests.interactive.tmux_kit import pi_rig

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")


def test_the_picker_asks_no_blocks_and_yes_runs(tmp_path: Path) -> None:
    with pi_rig(tmp_path, "permission-gate") as rig:
        (rig.cwd / "build").mkdir()
        rm = Reply(tool_calls=[("bash", {"command": "rm -rf build"})])
        rig.server.add(rm, Reply(text="left it alone"), rm, Reply(text="removed it"))
        rig.start("-e", "plugin:permission_gate", "--no-session")
        rig.tmux.wait_for("fake-model")
        rig.command("clean up")
        rig.tmux.wait_for("Dangerous command")
        screen = rig.tmux.wait_for("rm -rf build")
        assert "Allow?" in screen
        rig.tmux.keys("Down")
        rig.tmux.keys("Enter")
        rig.tmux.wait_for("left it alone")
        assert "Blocked by user" in rig.tmux.screen()
        assert (rig.cwd / "build").is_dir()
        assert "Blocked by user" in str(rig.server.requests[1].body["messages"][-1]["content"])

        rig.tmux.wait_gone("Allow?")
        rig.command("now really")
        rig.tmux.wait_for("Allow?", visible=True)
        rig.tmux.keys("Enter")  # the picker starts on "Yes"
        rig.tmux.wait_for("removed it")
        assert not (rig.cwd / "build").exists()
