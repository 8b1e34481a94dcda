"""Fixtures to run the real ``pi`` command against the fake model server, on each wire."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from pi_core.testing.fake_server import FakeModelServer

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
        command = [sys.executable, "-c", "from pi_core.cli import cli; cli()",
                   "--provider", "fake", "--model", "fake-model", *args]
        return subprocess.run(command, input=stdin if stdin is not None else "", capture_output=True, text=True,
                              cwd=self.cwd, env=self.env(), timeout=timeout)

    def popen(self, *args: str) -> subprocess.Popen[str]:
        command = [sys.executable, "-c", "from pi_core.cli import cli; cli()",
                   "--provider", "fake", "--model", "fake-model", *args]
        return subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, cwd=self.cwd, env=self.env(), start_new_session=True)

    def sent_tools(self, index: int = 0) -> list[str]:
        body = self.server.requests[index].body
        return [t.get("name") or t.get("function", {}).get("name") for t in body.get("tools", [])]


def write_models(home: Path, base_url: str, api: str) -> None:
    home.mkdir(parents=True, exist_ok=True)
    models = {"providers": {"fake": {
        "baseUrl": base_url, "api": api, "apiKey": "test-key",
        "models": [{"id": "fake-model", "name": "Fake Model", "reasoning": False, "input": ["text", "image"],
                    "contextWindow": 100000, "maxTokens": 4096,
                    "cost": {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75}}],
    }}}
    (home / "models.json").write_text(json.dumps(models))


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
