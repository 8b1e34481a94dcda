"""End to end: the real ``pi`` in tmux against the fake model server, keys in with send-keys, the
screen read back with capture-pane. Waits poll the screen with generous limits; nothing is timed.

The server runs inside this test process (the standalone ``python -m`` form is not used, see report).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pi_core.testing.fake_server import FakeModelServer, Reply

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

WIDTH, HEIGHT = 110, 40


class Tmux:
    def __init__(self, socket: str, session: str) -> None:
        self.socket, self.session = socket, session

    def run(self, *args: str) -> str:
        done = subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True, timeout=20, check=False)
        return done.stdout

    def keys(self, *keys: str) -> None:
        self.run("send-keys", "-t", self.session, *keys)

    def type(self, text: str) -> None:
        self.run("send-keys", "-t", self.session, "-l", text)

    def screen(self) -> str:
        return self.run("capture-pane", "-p", "-J", "-S", "-500", "-t", self.session)

    def wait_for(self, text: str, limit: float = 30.0) -> str:
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            screen = self.screen()
            if text in screen:
                return screen
            time.sleep(0.1)
        raise AssertionError(f"{text!r} never appeared on screen:\n{self.screen()}")


def write_models(home: Path, base_url: str) -> None:
    home.mkdir(parents=True, exist_ok=True)
    entry = {"reasoning": False, "input": ["text"], "contextWindow": 100000, "maxTokens": 4096,
             "cost": {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75}}
    models = {"providers": {"fake": {"baseUrl": base_url, "api": "anthropic-messages", "apiKey": "test-key",
                                     "models": [{"id": "fake-model", "name": "Fake Model", **entry},
                                                {"id": "fake-model-2", "name": "Fake Model Two", **entry}]}}}
    (home / "models.json").write_text(json.dumps(models))


@pytest.fixture
def pi_tmux(tmp_path: Path) -> Iterator[tuple[Tmux, FakeModelServer, Path]]:
    with FakeModelServer() as server:
        home, cwd = tmp_path / "agent", tmp_path / "project"
        cwd.mkdir()
        (cwd / "notes.txt").write_text("remember the milk\n")
        write_models(home, server.base_url_for("anthropic-messages"))
        tmux = Tmux(f"pi-test-{os.getpid()}-{id(tmp_path)}", "pi")
        env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and k != "TMUX"}
        env.update(PI_CODING_AGENT_DIR=str(home), TERM="xterm-256color")
        pi = f"{sys.executable} -c 'from pi_core.app.cli import cli; cli()' --provider fake --model fake-model --tui-mode regular"
        # After pi exits, show its exit code and whether the terminal is back in cooked mode.
        script = f"{pi}; echo EXITED=$?; stty -a | tr ' ' '\\n' | grep -x -e icanon -e -icanon -e echo; echo STTY-DONE; sleep 120"
        subprocess.run(["tmux", "-L", tmux.socket, "new-session", "-d", "-s", "pi", "-x", str(WIDTH),
                        "-y", str(HEIGHT), "-c", str(cwd), "bash", "-c", script], env=env, check=True, timeout=20)
        try:
            yield tmux, server, cwd
        finally:
            subprocess.run(["tmux", "-L", tmux.socket, "kill-server"], capture_output=True, timeout=20, check=False)


def test_session_in_tmux(pi_tmux: tuple[Tmux, FakeModelServer, Path]) -> None:
    tmux, server, cwd = pi_tmux
    tmux.wait_for("(fake) fake-model")  # the footer: the app is up

    # A streamed answer after a tool call, with the tool's rendering.
    server.add(Reply(text="Let me look at the notes.", tool_calls=[("read", {"path": "notes.txt"})]),
               Reply(text="The note says: **remember the milk**."))
    tmux.type("what is in notes.txt?")
    tmux.keys("Enter")
    screen = tmux.wait_for("The note says: remember the milk.")
    assert "Let me look at the notes." in screen
    assert "read notes.txt" in screen
    assert "1 lines (ctrl+o to show)" in screen

    # Steering while a slow tool runs: queued, shown, then delivered after the tool finishes.
    gate = cwd / "go"  # the tool runs until the test creates this file: slow, but not timed
    command = "while [ ! -f go ]; do sleep 0.05; done; echo slow-done"
    server.add(Reply(tool_calls=[("bash", {"command": command})]), Reply(text="Steered reply."))
    tmux.type("run the slow thing")
    tmux.keys("Enter")
    screen = tmux.wait_for("$ " + command)
    assert "Working… (" in screen and "esc to interrupt" in screen  # the indicator, with elapsed time
    tmux.type("also check the tests")
    tmux.keys("Enter")
    tmux.wait_for("Steering: also check the tests")
    gate.write_text("")
    screen = tmux.wait_for("Steered reply.")
    assert "slow-done" in screen
    steered = server.requests[-1].body["messages"]
    assert "also check the tests" in json.dumps(steered)

    # Escape aborts a running tool and nothing more is sent.
    server.add(Reply(tool_calls=[("bash", {"command": "sleep 30"})]))
    tmux.type("wait a long time")
    tmux.keys("Enter")
    tmux.wait_for("$ sleep 30")
    tmux.keys("Escape")
    screen = tmux.wait_for("Command aborted")
    requests_after_abort = len(server.requests)

    # /model switches the model (picker: filter, then Enter); the footer follows.
    tmux.type("/model")
    tmux.keys("Enter")
    tmux.wait_for("Select model")
    tmux.type("model-2")
    tmux.keys("Enter")
    tmux.wait_for("Model: fake/fake-model-2")
    tmux.wait_for("(fake) fake-model-2")
    assert len(server.requests) == requests_after_abort  # aborting sent nothing more

    # /quit ends pi with 0 and leaves the terminal in cooked mode with echo on.
    tmux.type("/quit")
    tmux.keys("Enter")
    screen = tmux.wait_for("STTY-DONE")
    assert "EXITED=0" in screen
    after = screen.split("EXITED=0", 1)[1].split("STTY-DONE", 1)[0].split()
    assert "icanon" in after and "echo" in after and "-icanon" not in after
