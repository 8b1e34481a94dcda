"""The interactive trust prompt and /trust, in tmux: the real ``pi`` on a terminal, keys in with send-keys."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pi_core.testing.runner import PiRunner

from .conftest import marker

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


class Screen:
    def __init__(self, runner: PiRunner) -> None:
        self.base = f"pi-trust-{os.getpid()}-{id(runner)}"
        self.socket, self.starts = self.base, 0
        env = {k: v for k, v in runner.env().items() if k != "TMUX"}
        env["TERM"] = "xterm-256color"
        self.runner, self.env = runner, env

    def start(self, *args: str) -> None:
        pi = f"{sys.executable} -c 'from pi_core.app.cli import cli; cli()' --provider fake --model fake-model --tui-mode regular"
        pi = " ".join([pi, *(shlex.quote(a) for a in args)])
        if self.starts:
            self.stop()
        self.starts += 1
        self.socket = f"{self.base}-{self.starts}"  # a fresh server each time: no race with the old one's exit
        subprocess.run(["tmux", "-L", self.socket, "new-session", "-d", "-s", "pi", "-x", "110", "-y", "40",
                        "-c", str(self.runner.cwd), "bash", "-c", f"{pi}; echo EXITED=$?; sleep 60"],
                       env=self.env, check=True, timeout=20)

    def tmux(self, *args: str) -> str:
        done = subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True, timeout=20,
                              check=False)
        return done.stdout

    def keys(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", "pi", *keys)

    def type(self, text: str) -> None:
        self.tmux("send-keys", "-t", "pi", "-l", text)

    def text(self) -> str:
        return self.tmux("capture-pane", "-p", "-J", "-S", "-200", "-t", "pi")

    def wait_for(self, text: str, limit: float = 30.0) -> str:
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            if text in (screen := self.text()):
                return screen
            time.sleep(0.1)
        raise AssertionError(f"{text!r} never appeared on screen:\n{self.text()}")

    def stop(self) -> None:
        self.tmux("kill-server")


def test_interactive_prompt_then_trust_command(pi: PiRunner) -> None:
    real = os.path.realpath(pi.cwd)
    screen = Screen(pi)
    try:
        screen.start()
        shown = screen.wait_for("Trust project folder?")
        assert real in shown and "Found: .pi/extensions" in shown
        for label in ("Trust", f"Trust parent folder ({os.path.dirname(real)})", "Trust (this session only)",
                      "Do not trust", "Do not trust (this session only)"):
            assert label in shown
        assert not marker(pi)  # nothing of the project's loaded while it asks
        screen.keys("Enter")  # "Trust", the first option
        screen.wait_for("(fake) fake-model")
        assert marker(pi) and "x (project)" in screen.text()
        assert json.loads((pi.home / "trust.json").read_text()) == {real: True}

        screen.type("/trust")
        time.sleep(0.5)  # let the completion menu settle, as a person would
        screen.keys("Enter")
        shown = screen.wait_for("Current session: trusted")
        assert f"Saved decision: trusted ({real})" in shown and "✓ Trust" in shown
        screen.keys("Down")
        screen.keys("Down")
        screen.keys("Enter")  # "Do not trust"
        screen.wait_for("Saved trust decision: untrusted. Restart pi for this to take effect.")
        assert json.loads((pi.home / "trust.json").read_text()) == {real: False}
        screen.type("/quit")
        time.sleep(0.5)
        screen.keys("Enter")
        screen.wait_for("EXITED=0")

        (pi.cwd / "MARKER").unlink()
        screen.start()  # saved "untrusted": no prompt, the project's extension stays out, the UI says why
        shown = screen.wait_for("This project is not trusted.")
        assert "Trust project folder?" not in shown and not marker(pi)
    finally:
        screen.stop()


def test_cancelling_the_prompt_trusts_nothing_and_saves_nothing(pi: PiRunner) -> None:
    screen = Screen(pi)
    try:
        screen.start()
        screen.wait_for("Trust project folder?")
        screen.keys("Escape")
        screen.wait_for("This project is not trusted.")
        assert not marker(pi) and not (pi.home / "trust.json").exists()
    finally:
        screen.stop()


def test_a_parent_choice_is_saved_for_the_parent(pi: PiRunner, tmp_path: Path) -> None:
    real = os.path.realpath(pi.cwd)
    screen = Screen(pi)
    try:
        screen.start()
        screen.wait_for("Trust project folder?")
        screen.keys("Down")
        screen.keys("Enter")
        screen.wait_for("(fake) fake-model")
        assert marker(pi)
        assert json.loads((pi.home / "trust.json").read_text()) == {os.path.dirname(real): True}
    finally:
        screen.stop()


def test_project_themes_load_only_after_trust(pi: PiRunner) -> None:
    from pi_core.resources.themes import REQUIRED_COLORS

    themes = pi.cwd / ".pi" / "themes"
    themes.mkdir(parents=True)
    colors = dict.fromkeys(REQUIRED_COLORS, "#aaaaaa")
    (themes / "proj.json").write_text(json.dumps({"name": "proj", "appearance": "dark", "colors": colors}))
    screen = Screen(pi)
    try:
        screen.start("-na", "--use-theme", "proj")
        shown = screen.wait_for('Theme "proj" not found')
        assert not marker(pi)
        screen.start("-a", "--use-theme", "proj")
        shown = screen.wait_for("(fake) fake-model")
        time.sleep(0.5)
        assert marker(pi) and "not found" not in screen.text(), shown
    finally:
        screen.stop()
