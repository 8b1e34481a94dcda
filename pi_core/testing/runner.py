"""Run the real ``pi`` command against the fake model server (for CLI-level tests outside tests/cli).

``pi_runner(tmp_path, api)`` is a context manager yielding a ``PiRunner`` whose agent dir names the fake
server's provider ``fake`` / model ``fake-model``; ``run`` waits for pi, ``popen`` starts it in its own
process group (so a test can signal it).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from pi_core.testing.fake_server import FakeModelServer
from pi_core.testing.pi_home import FAKE_MODEL, FAKE_PROVIDER, write_models

CLI = [sys.executable, "-c", "from pi_core.app.cli import cli; cli()"]


@dataclass
class PiRunner:
    server: FakeModelServer
    api: str
    home: Path  # PI_CODING_AGENT_DIR
    cwd: Path
    extra_env: dict[str, str] = field(default_factory=dict)

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
        env["PI_CODING_AGENT_DIR"] = str(self.home)
        env.update(self.extra_env)
        return env

    def command(self, *args: str) -> list[str]:
        return [*CLI, "--provider", FAKE_PROVIDER, "--model", FAKE_MODEL, *args]

    def run(self, *args: str, stdin: str | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        return subprocess.run(self.command(*args), input=stdin if stdin is not None else "", capture_output=True,
                              text=True, cwd=self.cwd, env=self.env(), timeout=timeout, check=False)

    def popen(self, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen(self.command(*args), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, cwd=self.cwd, env=self.env(),
                                start_new_session=True)

    def settings(self, text: str) -> None:
        """Write ``settings.toml`` in the agent dir."""
        (self.home / "settings.toml").write_text(text)

    def session_files(self) -> list[Path]:
        return sorted((self.home / "sessions").rglob("*.jsonl"))


@contextmanager
def pi_runner(root: Path, api: str = "anthropic-messages") -> Iterator[PiRunner]:
    """A fake server plus ``root/agent`` (config) and ``root/project`` (cwd) for one test."""
    with FakeModelServer() as server:
        home, cwd = root / "agent", root / "project"
        cwd.mkdir(parents=True, exist_ok=True)
        write_models(home, server.base_url_for(api), api)
        yield PiRunner(server, api, home, cwd)
