"""timed_confirm in the interactive UI (tmux): the dialog takes an answer, and counts down in its title."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.interactive.tmux_kit import pi_rig

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")


def test_timed_select_is_answered_in_the_picker(tmp_path: Path) -> None:
    with pi_rig(tmp_path, "timed-select") as rig:
        rig.start("-e", "plugin:timed_confirm", "--no-session")
        rig.tmux.wait_for("fake-model")
        rig.command("/timed-select")
        rig.tmux.wait_for("Option C", visible=True)
        rig.tmux.keys("Down")
        rig.tmux.keys("Enter")
        rig.tmux.wait_for("Selected: Option B")


@pytest.mark.xfail(strict=True, reason="the interactive dialogs show no countdown yet (notes/requests.md, g1 -> tui2)")
def test_timed_confirm_counts_down_in_its_title(tmp_path: Path) -> None:
    with pi_rig(tmp_path, "timed-confirm") as rig:
        rig.start("-e", "plugin:timed_confirm", "--no-session")
        rig.tmux.wait_for("fake-model")
        rig.command("/timed")
        rig.tmux.wait_for("Timed Confirmation (5s)", limit=4)
        rig.tmux.wait_for("Timed Confirmation (4s)", limit=4)
        rig.tmux.keys("Enter")  # the picker starts on "Yes"
        rig.tmux.wait_for("Confirmed by user!")
