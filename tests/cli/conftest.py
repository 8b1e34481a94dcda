"""Fixtures to run the real ``pi`` command against the fake model server, on each wire."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from pi_core.testing.fake_server import FakeModelServer
from pi_core.testing.pi_home import write_models

WIRES = ["anthropic-messages", "openai-completions", "openai-responses"]


@dataclass
class PiRunner:
    server: FakeModelServer
    api: str
    home: Path  # PI_CODING_AGENT_DIR
    cwd: Path

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
        env["PI_CODING_AGENT_DIR"] = str(self.home)
        return env

    def run(self, *args: str, stdin: str | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-c", "from pi_core.app.cli import cli; cli()",
                   "--provider", "fake", "--model", "fake-model", *args]
        return subprocess.run(command, input=stdin if stdin is not None else "", capture_output=True, text=True,
                              cwd=self.cwd, env=self.env(), timeout=timeout, check=False)

    def popen(self, *args: str) -> subprocess.Popen[str]:
        command = [sys.executable, "-c", "from pi_core.app.cli import cli; cli()",
                   "--provider", "fake", "--model", "fake-model", *args]
        return subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, cwd=self.cwd, env=self.env(), start_new_session=True)

    def sent_tools(self, index: int = 0) -> list[str]:
        body = self.server.requests[index].body
        return [t.get("name") or t.get("function", {}).get("name") for t in body.get("tools", [])]


@pytest.fixture(params=WIRES)
def pi(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[PiRunner]:
    with FakeModelServer() as server:
        home, cwd = tmp_path / "agent", tmp_path / "project"
        cwd.mkdir()
        write_models(home, server.base_url_for(request.param), request.param)
        yield PiRunner(server, request.param, home, cwd)


@pytest.fixture
def pi_anthropic(tmp_path: Path) -> Iterator[PiRunner]:
    with FakeModelServer() as server:
        home, cwd = tmp_path / "agent", tmp_path / "project"
        cwd.mkdir()
        write_models(home, server.base_url_for("anthropic-messages"), "anthropic-messages")
        yield PiRunner(server, "anthropic-messages", home, cwd)
