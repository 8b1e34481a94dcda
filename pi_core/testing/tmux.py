"""The real ``pi`` in tmux for TUI tests: keys in with send-keys, the screen back with capture-pane.

Waits poll the screen with generous limits (nothing is timed); every run has its own tmux server socket,
killed afterwards. For a plugin pack's tests: ``with tmux_pi(example, "name") as tui: tui.start("my_plugin")``
where ``example`` gives ``args(plugin, *args)`` (pi's arguments), ``env()``, ``cwd`` and a scratch folder.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Protocol

WIDTH, HEIGHT = 110, 40
PI = [sys.executable, "-c", "from pi_core.app.cli import cli; cli()"]


class Tmux:
    def __init__(self, socket: str, session: str) -> None:
        self.socket, self.session = socket, session

    def run(self, *args: str) -> str:
        done = subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True, timeout=20,
                              check=False)
        return done.stdout

    def new_session(self, width: int, height: int, cwd: str, script: str, env: dict[str, str]) -> None:
        """Start the session running ``script`` (bash) afresh. Killing the last session ends the tmux server, and a
        new-session that reaches the server while it is going fails: try again once that server is gone."""
        self.run("kill-session", "-t", self.session)
        command = ["tmux", "-L", self.socket, "new-session", "-d", "-s", self.session, "-x", str(width), "-y",
                   str(height), "-c", cwd, "bash", "-c", script]
        for attempt in range(5):
            done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=20, check=False)
            if done.returncode == 0:
                return
            time.sleep(0.2 * (attempt + 1))
        raise AssertionError(f"tmux new-session failed: {done.stderr.strip()}")

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
        """Scrollback and screen; ``colours`` keeps the SGR codes (capture-pane -e)."""
        args = ["capture-pane", "-p", "-J", "-S", "-500", "-t", self.session]
        return self.run(*args[:2], "-e", *args[2:]) if colours else self.run(*args)

    def visible(self, colours: bool = False) -> str:
        """Only what is on screen now (no scrollback)."""
        return self.run("capture-pane", "-p", "-J", *(["-e"] if colours else []), "-t", self.session)

    def pane_title(self) -> str:
        return self.run("display-message", "-p", "-t", self.session, "#{pane_title}").strip()

    def cursor_visible(self) -> bool:
        return self.run("display-message", "-p", "-t", self.session, "#{cursor_flag}").strip() == "1"

    def wait_for(self, text: str, limit: float = 30.0, *, visible: bool = False, flat: bool = False,
                 colours: bool = False) -> str:
        """Wait until ``text`` is on screen; ``flat`` ignores whitespace (text rich wrapped over lines)."""
        deadline = time.monotonic() + limit
        wanted = "".join(text.split()) if flat else text
        while time.monotonic() < deadline:
            screen = self.visible(colours) if visible else self.screen(colours)
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

    def wait_title(self, text: str, limit: float = 30.0, *, exact: bool = False) -> str:
        """Wait until the pane title (OSC 0/2) contains ``text`` (or is it, with ``exact``)."""
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            title = self.pane_title()
            if title == text or (not exact and text in title):
                return title
            time.sleep(0.05)
        raise AssertionError(f"{text!r} never was the pane title (last: {self.pane_title()!r})")


class PiCommand(Protocol):
    """How ``TmuxPi`` starts pi: the arguments after ``pi`` for a plugin, the environment and the directory."""

    @property
    def cwd(self) -> object: ...  # where pi starts, read with str()
    def args(self, plugin: str | None, *args: str) -> list[str]: ...
    def env(self) -> Mapping[str, str]: ...


@dataclass
class TmuxPi:
    """pi running in a tmux session for one test; ``start`` (re)starts it, ``EXITED=<code>`` shows its end."""

    tmux: Tmux
    runner: PiCommand

    def start(self, plugin: str | None, *args: str, env: dict[str, str] | None = None, width: int = WIDTH,
              height: int = HEIGHT, tui_mode: str | None = "regular") -> None:
        """``tui_mode``: ``--tui-mode`` for this run (None: the settings' or the default mode)."""
        environ = dict(self.runner.env())
        for name in ("TMUX", "COLUMNS", "LINES"):  # pi must measure the tmux window, not the test's terminal
            environ.pop(name, None)
        environ.update(TERM="xterm-256color", COLORTERM="truecolor", **(env or {}))
        mode = ["--tui-mode", tui_mode] if tui_mode is not None else []
        script = f"{shlex.join([*PI, *mode, *self.runner.args(plugin, *args)])}; echo EXITED=$?; sleep 120"
        self.tmux.new_session(width, height, str(self.runner.cwd), script, environ)

    def command(self, text: str) -> None:
        """Type ``text`` into the editor and press Enter once the editor shows it (an Enter racing the typed keys
        and the completion menu on a loaded machine is how tmux tests flake)."""
        wanted = "".join(text.split())
        before = "".join(self.tmux.visible().split()).count(wanted)
        self.tmux.type(text)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and "".join(self.tmux.visible().split()).count(wanted) <= before:
            time.sleep(0.05)
        self.tmux.keys("Enter")


@contextmanager
def tmux_pi(runner: PiCommand, name: str) -> Iterator[TmuxPi]:
    """A TmuxPi on its own tmux server (socket named after ``name`` and this process), killed at the end."""
    tmux = Tmux(f"pi-{name}-{os.getpid()}-{id(runner)}", "pi")
    try:
        yield TmuxPi(tmux, runner)
    finally:
        subprocess.run(["tmux", "-L", tmux.socket, "kill-server"], capture_output=True, timeout=20, check=False)


def tmux_available() -> bool:
    from shutil import which

    return which("tmux") is not None


__all__ = ["HEIGHT", "WIDTH", "Tmux", "TmuxPi", "tmux_available", "tmux_pi"]
