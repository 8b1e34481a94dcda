"""Fixtures for the sandbox tests: pi against the fake model server with a fake HOME holding secrets, a
workspace, and a folder outside it; the mechanisms this machine has (each test says why it skips)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pi_core.testing.fake_server import Reply
from pi_core.testing.runner import PiRunner, pi_runner

SECRET = "-----BEGIN OPENSSH PRIVATE KEY----- not-a-real-key"


def bwrap_problem() -> str | None:
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return "bwrap is not installed (.ci/run installs the bubblewrap package)"
    from pi_plugins.sandbox.bwrap import probe

    return probe(bwrap)


def landlock_problem() -> str | None:
    from pi_plugins.sandbox.landlock import abi

    version = abi()
    return None if version >= 4 else f"this kernel's Landlock ABI is {version} (4 blocks TCP)"


MECHANISMS = {"bubblewrap": bwrap_problem, "landlock": landlock_problem}


@pytest.fixture(params=sorted(MECHANISMS))
def mechanism(request: pytest.FixtureRequest) -> str:
    problem = MECHANISMS[request.param]()
    if problem:
        pytest.skip(f"{request.param} is not usable here: {problem}")
    return str(request.param)


@dataclass
class Box:
    """One test's world: ``pi`` (cwd = the workspace), a fake HOME with an SSH key, a folder outside."""

    pi: PiRunner
    root: Path

    @property
    def workspace(self) -> Path:
        return self.pi.cwd

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def outside(self) -> Path:
        return self.root / "outside"

    def settings(self, **sandbox: Any) -> None:
        lines = ["[sandbox]", *(f"{key} = {json.dumps(value)}" for key, value in sandbox.items())]
        self.pi.settings("\n".join(lines) + "\n")

    def run(self, calls: list[tuple[str, dict[str, Any]]], *args: str) -> Run:
        """pi in JSON mode, the model making each call in turn (one per turn), then saying "done"."""
        self.pi.server.add(*(Reply(tool_calls=[call]) for call in calls), Reply(text="done"))
        done = self.pi.run("--mode", "json", *args, "-p", "go", timeout=120)
        return Run(done, [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")])

    def outside_files(self) -> dict[str, str]:
        return {str(p.relative_to(self.outside)): p.read_text() if p.is_file() else "<dir>"
                for p in sorted(self.outside.rglob("*"))}


@dataclass
class Run:
    process: subprocess.CompletedProcess[str]
    events: list[dict[str, Any]]

    @property
    def results(self) -> list[tuple[str, str, bool]]:
        """(tool, text, is_error) of each finished tool call, in order."""
        return [(e["toolName"], "".join(c.get("text", "") for c in e["result"]["content"]), bool(e.get("isError")))
                for e in self.events if e.get("type") == "tool_execution_end"]


@pytest.fixture
def box(tmp_path: Path) -> Iterator[Box]:
    root = tmp_path
    (root / "home" / ".ssh").mkdir(parents=True)
    (root / "home" / ".ssh" / "id_ed25519").write_text(SECRET)
    (root / "outside").mkdir()
    (root / "outside" / "target.txt").write_text("original\n")
    with pi_runner(root) as pi:
        pi.extra_env["HOME"] = str(root / "home")
        (pi.home / "auth.json").write_text('{"fake": {"type": "api_key", "key": "sk-secret-in-auth"}}')
        os.chmod(pi.home / "auth.json", 0o600)
        yield Box(pi, root)
