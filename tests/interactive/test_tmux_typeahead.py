"""tmux: keys typed the moment pi starts reach the editor intact and in order (issue 19: the editor takes keys
within 150 ms of start). A plugin holds the start-up until the test lets it go, so the keys are typed while
only the stand-in editor (pi_core.app.typeahead) is up: an Enter typed then still submits, a paste stays one
text, what comes after the Enter stays in the editor."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from tmux_kit import pi_rig

from pi_core.testing.fake_server import Reply

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

GATE = '''
import os
import time
from pathlib import Path

while not Path(os.environ["TYPEAHEAD_GATE"]).exists():  # pi's start-up waits here, after the stand-in is up
    time.sleep(0.02)
'''


def test_keys_typed_at_start_arrive_intact(tmp_path: Path) -> None:
    with pi_rig(tmp_path, "typeahead") as rig:
        (rig.cwd / "gate.py").write_text(GATE)
        gate = tmp_path / "go"
        rig.server.add(Reply(text="answer to the early prompt"), Reply(text="second answer"))
        rig.start("-e", "gate.py", "--no-session", env={"TYPEAHEAD_GATE": str(gate)})
        rig.tmux.type("héllo wörld")  # at once: pi may not even be running yet
        rig.tmux.wait_for("─" * 20 + "\nhéllo wörld\n" + "─" * 20, visible=True)  # the stand-in shows it
        rig.tmux.keys("BSpace", "BSpace")
        rig.tmux.paste("ld, are you\nthere?")  # bracketed: its new line is text, not an Enter
        rig.tmux.keys("Enter")
        rig.tmux.type("second")
        rig.tmux.wait_for("\nsecond\n", visible=True)
        assert "(fake) fake-model" not in rig.tmux.visible()  # still starting: the keys went to the stand-in
        gate.touch()
        rig.tmux.wait_for("answer to the early prompt")
        screen = rig.tmux.wait_for("(fake) fake-model", visible=True)
        request = rig.server.requests[-1].body["messages"][-1]
        assert request["role"] == "user"
        assert request["content"][0]["text"] == "héllo wörld, are you\nthere?"
        editor = screen.split("answer to the early prompt", 1)[1]
        assert "second" in editor and "héllo" not in editor  # the text after the Enter waits in the editor
        rig.tmux.keys("Enter")
        rig.tmux.wait_for("second answer")
        assert rig.server.requests[-1].body["messages"][-1]["content"][0]["text"] == "second"
        rig.tmux.keys("C-d")
        rig.tmux.wait_for("EXITED=0")
        rig.tmux.type("cooked again")  # the shell's sleep has the terminal: the tty echoes as before pi ran
        rig.tmux.wait_for("cooked again", visible=True)
