"""tmux: the ``terminal.*`` settings of issue 36 with their visible effect on a real pi's screen."""

from __future__ import annotations

import json
import re
import shutil
import time
from pathlib import Path

import pytest
from tmux_kit import pi_rig

from pi_core.testing.fake_server import Reply

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


@pytest.mark.parametrize(("setting", "colorterm", "rgb"), [(False, "truecolor", False), (True, "", True),
                                                           ("auto", "truecolor", True)])
def test_true_color_decides_the_colour_codes_of_the_transcript_and_the_editor(
        tmp_path: Path, setting: object, colorterm: str, rgb: bool) -> None:
    with pi_rig(tmp_path, f"truecolor-{setting}") as rig:
        (rig.home / "settings.json").write_text(json.dumps({"terminal": {"trueColor": setting}}))
        rig.start(env={"COLORTERM": colorterm})
        rig.tmux.wait_for("(fake) fake-model")
        rig.server.add(Reply(text="## Result\n\nDone."))
        rig.command("hello there")
        rig.tmux.wait_for("Result")
        coloured = rig.tmux.screen(colours=True)
        assert (re.search(r"[34]8;2;\d+;\d+;\d+", coloured) is not None) is rgb, coloured
        assert re.search(r"[34]8;5;\d+", coloured) is not None or rgb


@pytest.mark.parametrize("enabled", [True, False])
def test_show_terminal_progress_sends_osc_9_4_while_the_agent_works(tmp_path: Path, enabled: bool) -> None:
    with pi_rig(tmp_path, f"progress-{enabled}") as rig:
        (rig.home / "settings.json").write_text(json.dumps({"terminal": {"showTerminalProgress": enabled}}))
        raw = tmp_path / "raw-output"
        rig.start()
        rig.tmux.run("pipe-pane", "-o", "-t", rig.tmux.session, f"cat >> {raw}")  # what pi writes, unparsed
        rig.tmux.wait_for("(fake) fake-model")
        rig.server.add(Reply(text="slow answer", chunk_size=1, chunk_delay=0.15))
        rig.command("hello there")
        rig.tmux.wait_for("slow answer")
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:  # the run's end reaches the terminal just after its answer
            written = raw.read_bytes().decode("utf-8", "replace")
            if "\x1b]9;4;0\x07" in written or not enabled and time.monotonic() > deadline - 8:
                break
            time.sleep(0.2)
        if enabled:
            assert written.count("\x1b]9;4;3\x07") >= 2  # busy, and again each second while it lasts
            assert written.rindex("\x1b]9;4;0\x07") > written.rindex("\x1b]9;4;3\x07")  # cleared at the end
        else:
            assert "\x1b]9;4;" not in written
