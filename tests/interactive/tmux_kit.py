"""The real ``pi`` in tmux against the fake model server: keys in with send-keys, the screen read back with
capture-pane. Waits poll the screen with generous limits; nothing is timed. Every run gets its own tmux
server (socket) and kills it afterwards."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from pi_core.testing.fake_server import FakeModelServer

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

    def raw(self, data: str) -> None:
        """Bytes as a terminal would send them (escape sequences of keys tmux has no name for)."""
        self.run("send-keys", "-t", self.session, "-H", *(f"{b:02x}" for b in data.encode()))

    def paste(self, text: str) -> None:
        """A bracketed paste, as when a file is dropped on the terminal."""
        self.run("set-buffer", "-b", "pi-test", text)
        self.run("paste-buffer", "-p", "-d", "-b", "pi-test", "-t", self.session)

    def screen(self, colours: bool = False) -> str:
        args = ["capture-pane", "-p", "-J", "-S", "-500", "-t", self.session]
        return self.run(*args[:2], "-e", *args[2:]) if colours else self.run(*args)

    def visible(self) -> str:
        """Only what is on screen now (no scrollback)."""
        return self.run("capture-pane", "-p", "-J", "-t", self.session)

    def cursor_visible(self) -> bool:
        return self.run("display-message", "-p", "-t", self.session, "#{cursor_flag}").strip() == "1"

    def wait_for(self, text: str, limit: float = 30.0, *, visible: bool = False, flat: bool = False) -> str:
        """Wait until ``text`` is on screen; ``flat`` ignores whitespace (text rich wrapped over lines)."""
        deadline = time.monotonic() + limit
        wanted = "".join(text.split()) if flat else text
        while time.monotonic() < deadline:
            screen = self.visible() if visible else self.screen()
            if wanted in ("".join(screen.split()) if flat else screen):
                return screen
            time.sleep(0.1)
        raise AssertionError(f"{text!r} never appeared on screen:\n{self.screen()}")

    def wait_gone(self, text: str, limit: float = 30.0) -> str:
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            screen = self.visible()
            if text not in screen:
                return screen
            time.sleep(0.1)
        raise AssertionError(f"{text!r} stayed on screen:\n{self.visible()}")


def write_models(home: Path, base_url: str) -> None:
    home.mkdir(parents=True, exist_ok=True)
    entry = {"reasoning": False, "input": ["text", "image"], "contextWindow": 100000, "maxTokens": 4096,
             "cost": {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75}}
    models = {"providers": {"fake": {"baseUrl": base_url, "api": "anthropic-messages", "apiKey": "test-key",
                                     "models": [{"id": "fake-model", "name": "Fake Model", **entry},
                                                {"id": "fake-model-2", "name": "Fake Model Two", **entry},
                                                {"id": "fake-model-3", "name": "Fake Model Three", **entry}]}}}
    (home / "models.json").write_text(json.dumps(models))


@dataclass
class Rig:
    tmux: Tmux
    server: FakeModelServer
    home: Path
    cwd: Path
    tmp: Path

    def start(self, *args: str, env: dict[str, str] | None = None, width: int = WIDTH, height: int = HEIGHT) -> None:
        """Start pi (again) in the tmux session; it prints EXITED=<code> when it ends."""
        self.tmux.run("kill-session", "-t", self.tmux.session)
        environ = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and k != "TMUX"}
        environ.update(PI_CODING_AGENT_DIR=str(self.home), TERM="xterm-256color", COLORTERM="truecolor",
                       HOME=str(self.tmp / "home"))
        environ.update(env or {})
        pi = [sys.executable, "-c", "from pi_core.app.cli import cli; cli()", "--provider", "fake",
              "--model", "fake-model", *args]
        script = f"{shlex.join(pi)}; echo EXITED=$?; sleep 120"
        subprocess.run(["tmux", "-L", self.tmux.socket, "new-session", "-d", "-s", self.tmux.session,
                        "-x", str(width), "-y", str(height), "-c", str(self.cwd), "bash", "-c", script],
                       env=environ, check=True, timeout=20)

    def command(self, text: str) -> None:
        self.tmux.type(text)
        self.tmux.keys("Enter")


@contextmanager
def pi_rig(tmp_path: Path, name: str) -> Iterator[Rig]:
    with FakeModelServer() as server:
        home, cwd = tmp_path / "agent", tmp_path / "project"
        cwd.mkdir()
        (tmp_path / "home").mkdir()
        write_models(home, server.base_url_for("anthropic-messages"))
        tmux = Tmux(f"pi-{name}-{os.getpid()}-{id(tmp_path)}", "pi")
        try:
            yield Rig(tmux, server, home, cwd, tmp_path)
        finally:
            subprocess.run(["tmux", "-L", tmux.socket, "kill-server"], capture_output=True, timeout=20, check=False)
