"""Run ``pi`` on a pseudo-terminal (``pi auth login`` needs one) and talk to it like a user."""

from __future__ import annotations

import os
import pty
import select
import signal
import subprocess
import sys
import time
from pathlib import Path


class PtyPi:
    def __init__(self, args: list[str], env: dict[str, str], cwd: Path) -> None:
        master, slave = pty.openpty()
        self.proc = subprocess.Popen([sys.executable, "-c", "from pi_core.app.cli import cli; cli()", *args],
                                     stdin=slave, stdout=slave, stderr=slave, env=env, cwd=cwd, close_fds=True,
                                     start_new_session=True)
        os.close(slave)
        self.master = master
        self.output = ""

    def _read(self, timeout: float) -> bool:
        ready, _, _ = select.select([self.master], [], [], timeout)
        if not ready:
            return False
        try:
            chunk = os.read(self.master, 65536)
        except OSError:
            return False
        if not chunk:
            return False
        self.output += chunk.decode("utf-8", "replace").replace("\r\n", "\n")
        return True

    def expect(self, text: str, timeout: float = 20) -> str:
        """Wait until ``text`` has been printed; the output so far."""
        deadline = time.monotonic() + timeout
        while text not in self.output:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or (not self._read(min(remaining, 0.2)) and self.proc.poll() is not None
                                  and not self._read(0.1)):
                if text in self.output:
                    break
                raise AssertionError(f"{text!r} never appeared; output:\n{self.output}")
        return self.output

    def send(self, line: str) -> None:
        os.write(self.master, (line + "\n").encode())

    def interrupt(self) -> None:
        os.killpg(self.proc.pid, signal.SIGINT)

    def wait(self, timeout: float = 30) -> int:
        deadline = time.monotonic() + timeout
        while self.proc.poll() is None and time.monotonic() < deadline:
            self._read(0.1)
        while self._read(0.05):
            pass
        if self.proc.poll() is None:
            self.proc.kill()
            raise AssertionError(f"pi did not exit; output:\n{self.output}")
        os.close(self.master)
        return int(self.proc.returncode)
