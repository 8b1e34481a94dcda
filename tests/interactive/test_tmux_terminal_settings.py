"""tmux: the ``terminal.*`` settings of issue 36 with their visible effect on a real pi's screen."""

from __future__ import annotations

import json
import re
import shutil
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
