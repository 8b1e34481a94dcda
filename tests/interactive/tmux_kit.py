"""The real ``pi`` in tmux against the fake model server: keys in with send-keys, the screen read back with
capture-pane. Waits poll the screen with generous limits; nothing is timed. Every run gets its own tmux
server (socket) and kills it afterwards."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from pi_core.testing.fake_server import FakeModelServer
from pi_core.testing.tmux import HEIGHT, WIDTH, Tmux

__all__ = ["HEIGHT", "WIDTH", "Rig", "Tmux", "pi_rig", "write_models"]



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

    def start(self, *args: str, env: dict[str, str] | None = None, width: int = WIDTH, height: int = HEIGHT,
              tui_mode: str | None = "regular", outside_tmux: bool = False) -> None:
        """Start pi (again) in the tmux session; it prints EXITED=<code> when it ends. ``tui_mode``: ``--tui-mode``
        (None: the settings' or the default mode). ``outside_tmux``: pi sees no ``TMUX`` or ``TERM_PROGRAM`` and
        the ``TERM`` given (tmux sets its own in its panes), as when run in the terminal ``env`` describes."""
        environ = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and k != "TMUX"}
        environ.update(PI_CODING_AGENT_DIR=str(self.home), TERM="xterm-256color", COLORTERM="truecolor",
                       HOME=str(self.tmp / "home"))
        environ.update(env or {})
        pi = [sys.executable, "-c", "from pi_core.app.cli import cli; cli()", "--provider", "fake",
              "--model", "fake-model", *(["--tui-mode", tui_mode] if tui_mode else []), *args]
        if outside_tmux:
            own = {"TERM": environ["TERM"], **(env or {})}
            pi = ["env", "-u", "TMUX", "-u", "TERM_PROGRAM", *(f"{k}={v}" for k, v in own.items()), *pi]
        script = f"{shlex.join(pi)}; echo EXITED=$?; sleep 120"
        self.tmux.new_session(width, height, str(self.cwd), script, environ)

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
