"""gondolin in the interactive UI (tmux), against the fake bridge: the footer shows the VM, ``!cmd`` runs in the guest,
``/gondolin`` shows the VM, and quitting stops the VM."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pi_core.testing.fakebin import FakeBin
from pi_core.testing.tmux import tmux_available, tmux_pi

pytestmark = pytest.mark.skipif(not tmux_available(), reason="tmux is not installed")

FAKE_BRIDGE = (Path(__file__).parent / "fake_gondolin_bridge.py").read_text()


def test_footer_user_bash_and_command_in_the_tui(example, tmp_path: Path) -> None:
    bins = FakeBin(tmp_path / "bin")
    bins.add("gondolin-bridge", FAKE_BRIDGE)
    with tmux_pi(example, "gondolin") as tui:
        tui.start("gondolin", "--no-session", env={"PATH": bins.env()["PATH"]})
        tui.tmux.wait_for("Gondolin: f00dfeed (/workspace)", visible=True)
        tui.command("!echo guest-$PWD")
        tui.tmux.wait_for("guest-/workspace", visible=True)
        tui.command("/gondolin")
        screen = tui.tmux.wait_for("Gondolin VM: f00dfeed-0000-4000-8000-gondolinfake", visible=True)
        assert f"Host workspace: {example.cwd}" in screen and "Guest workspace: /workspace" in screen
        tui.command("/quit")
        tui.tmux.wait_for("EXITED=0")
    ops = [json.loads(line)["op"] for line in (bins.directory / "gondolin.requests.jsonl").read_text().splitlines()]
    assert ops[0] == "start" and ops[-1] == "close" and ops.count("start") == 1
