"""mac_system_theme: pi's palette follows the appearance a fake ``osascript`` reports (it reads a state file,
standing in for macOS's dark-mode setting); in RPC mode the theme cannot change and nothing else happens."""

from __future__ import annotations

import re
import time
from pathlib import Path

from pi_core.testing.fakebin import FakeBin
from tests.interactive.tmux_kit import pi_rig

FAKE_OSASCRIPT = """
from pathlib import Path
print(Path(os.environ["FAKE_APPEARANCE"]).read_text().strip())
"""
SGR = re.compile(r"\x1b\[[0-9;]*m")


def fake_osascript(tmp_path: Path, dark: bool) -> tuple[FakeBin, Path, dict[str, str]]:
    bins, state = FakeBin(tmp_path / "bin"), tmp_path / "dark-mode"
    state.write_text("true" if dark else "false")
    bins.add("osascript", FAKE_OSASCRIPT)
    return bins, state, {"PATH": bins.env()["PATH"], "FAKE_APPEARANCE": str(state)}


def colours(screen: str) -> set[str]:
    return set(SGR.findall(screen))


def settle(tmux, limit: float = 15.0) -> set[str]:
    """The screen's colours once they stop changing."""
    last, deadline = None, time.monotonic() + limit
    while time.monotonic() < deadline:
        now = colours(tmux.screen(colours=True))
        if now == last:
            return now
        last = now
        time.sleep(1.0)
    raise AssertionError("the screen never settled")


def test_the_palette_follows_the_system_appearance(tmp_path: Path) -> None:
    bins, state, env = fake_osascript(tmp_path, dark=True)
    with pi_rig(tmp_path, "mac-theme") as rig:
        rig.start("-e", "plugin:mac_system_theme", "--no-session", env=env)
        rig.tmux.wait_for("fake-model")
        dark = settle(rig.tmux)
        asked = 'tell application "System Events" to tell appearance preferences to return dark mode'
        assert bins.calls("osascript")[0].argv == ["-e", asked]
        state.write_text("false")
        deadline = time.monotonic() + 20
        while colours(rig.tmux.screen(colours=True)) == dark:
            assert time.monotonic() < deadline, "the light palette never showed"
            time.sleep(0.5)
        light = settle(rig.tmux)
        assert light != dark
        state.write_text("true")
        deadline = time.monotonic() + 20
        while settle(rig.tmux) != dark:
            assert time.monotonic() < deadline, "the dark palette never came back"
        assert "EXITED" not in rig.tmux.screen()


def test_rpc_cannot_switch_and_stays_quiet(example, tmp_path: Path) -> None:
    bins, _, env = fake_osascript(tmp_path, dark=True)
    client = example.rpc("mac_system_theme", "--no-session", env=env)
    assert client.get_state()["model"]["id"] == "fake-model"
    deadline = time.monotonic() + 10
    while not bins.calls("osascript"):
        assert time.monotonic() < deadline, "osascript was never asked"
        time.sleep(0.1)
    time.sleep(0.5)
    assert [e for e in client.events if e.get("type") in ("extension_ui_request", "extension_error")] == []
