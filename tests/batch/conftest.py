"""A fake model that acts on each task's prompt, so many concurrent sessions can share one fake server.

A prompt ``RUN: <command>`` makes the model call bash with that command, then answer ``done: <output>``;
``LOOP: <command>`` calls bash with it on every turn, however many results came back; ``FAIL: <text>`` answers with a provider error (HTTP 400); anything else is answered ``answer: <prompt>``
at once. Sessions run on the Google wire, which pi speaks without importing a vendor SDK, so each task's
pi starts in about a second.

Tests marked ``@pytest.mark.slow`` run only with ``PI_SLOW_TESTS=1``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pi_core.testing.fake_server import RecordedRequest, Reply
from pi_core.testing.runner import PiRunner, pi_runner

WIRE = "google-generative-ai"


def _texts(parts: list[dict[str, Any]]) -> str:
    return "".join(part.get("text", "") for part in parts if isinstance(part, dict))


def agent(request: RecordedRequest) -> Reply:
    contents = (request.body or {}).get("contents") or []
    prompt = _texts(contents[0]["parts"]) if contents else ""
    last = contents[-1]["parts"] if contents else []
    results = [part["functionResponse"] for part in last if isinstance(part, dict) and "functionResponse" in part]
    if prompt.startswith("LOOP: "):
        return Reply(text="once more", tool_calls=[("bash", {"command": prompt[6:]})], input_tokens=100,
                     output_tokens=10)
    if results:
        output = json.dumps(results[-1].get("response"))
        return Reply(text=f"done: {output}", input_tokens=100, output_tokens=20)
    if prompt.startswith("RUN: "):
        return Reply(text="running it", tool_calls=[("bash", {"command": prompt[5:]})], input_tokens=100,
                     output_tokens=10)
    if prompt.startswith("FAIL: "):
        return Reply.http_error(400, prompt[6:])
    return Reply(text=f"answer: {prompt}", input_tokens=50, output_tokens=5)


class Batch:
    """``pi batch`` against the fake server: ``tasks(...)`` writes the tasks file, ``run``/``popen`` start pi."""

    def __init__(self, pi: PiRunner) -> None:
        self.pi = pi
        self.tasks_path = pi.cwd / "tasks.jsonl"
        self.out = pi.cwd / "out"

    def tasks(self, *tasks: dict[str, Any] | str) -> Path:
        lines = [task if isinstance(task, str) else json.dumps(task) for task in tasks]
        self.tasks_path.write_text("\n".join(lines) + "\n")
        return self.tasks_path

    def argv(self, *extra: str, pi_options: tuple[str, ...] = ()) -> list[str]:
        return [*pi_options, "batch", str(self.tasks_path), "--out", str(self.out), *extra]

    def run(self, *extra: str, pi_options: tuple[str, ...] = (), timeout: float = 180) -> Any:
        return self.pi.run(*self.argv(*extra, pi_options=pi_options), timeout=timeout)

    def popen(self, *extra: str) -> Any:
        return self.pi.popen(*self.argv(*extra))

    def results(self) -> list[dict[str, Any]]:
        path = self.out / "results.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []

    def by_id(self) -> dict[str, dict[str, Any]]:
        return {r["id"]: r for r in self.results()}

    def requests_for(self, prompt: str) -> int:
        """How many model requests the fake server got for the task with this prompt."""
        return sum(1 for r in self.pi.server.requests
                   if _texts(((r.body or {}).get("contents") or [{"parts": []}])[0]["parts"]) == prompt)


@pytest.fixture
def batch(tmp_path: Path) -> Iterator[Batch]:
    with pi_runner(tmp_path, WIRE) as pi:
        pi.server.responder = agent
        pi.extra_env["PYTHONUNBUFFERED"] = "1"
        yield Batch(pi)


PYTHON = sys.executable
