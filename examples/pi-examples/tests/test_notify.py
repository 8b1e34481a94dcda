"""notify: once the run has settled, the terminal gets one notification in the protocol the terminal speaks."""

from __future__ import annotations

import time
from pathlib import Path

from pi_core.testing.fake_script import Reply
from pi_core.testing.fakebin import FakeBin

OSC777 = "\x1b]777;notify;Pi;Ready for input\x07"
OSC99 = "\x1b]99;i=1:d=0;Pi\x1b\\\x1b]99;i=1:p=body;Ready for input\x1b\\"


def clean_env() -> dict[str, str]:
    return {"KITTY_WINDOW_ID": "", "WT_SESSION": ""}


def test_osc_777_once_after_the_run_settles(example) -> None:
    example.server.add(Reply(tool_calls=[("bash", {"command": "true"})]), Reply(text="all done"))
    done = example.run("notify", "--no-session", "-p", "go", env=clean_env())
    assert done.returncode == 0, done.stderr
    assert done.stdout.count(OSC777) == 1, "one notification per settled run, not per turn"
    assert "\x1b]99" not in done.stdout


def test_kitty_gets_osc_99(example) -> None:
    example.server.add(Reply(text="ok"))
    done = example.run("notify", "--no-session", "-p", "go", env={**clean_env(), "KITTY_WINDOW_ID": "1"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.count(OSC99) == 1 and OSC777 not in done.stdout


def test_windows_terminal_gets_a_toast(example, tmp_path: Path) -> None:
    bins = FakeBin(tmp_path / "bin")
    bins.add("powershell.exe")
    example.server.add(Reply(text="ok"))
    env = {**clean_env(), "WT_SESSION": "abc", "PATH": bins.env()["PATH"]}
    done = example.run("notify", "--no-session", "-p", "go", env=env)
    assert done.returncode == 0, done.stderr
    assert "\x1b]" not in done.stdout
    deadline = time.monotonic() + 10  # the toast is fire-and-forget: it may log after pi exited
    while not bins.calls("powershell.exe") and time.monotonic() < deadline:
        time.sleep(0.05)
    calls = bins.calls("powershell.exe")
    assert len(calls) == 1
    argv = calls[0].argv
    assert argv[:2] == ["-NoProfile", "-Command"]
    assert "CreateTextNode('Ready for input')" in argv[2] and "CreateToastNotifier('Pi')" in argv[2]
