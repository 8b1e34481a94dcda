"""A project whose ``.pi/extensions/x.py`` writes a marker file when it is imported, and the real ``pi``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pi_core.testing.fake_server import Reply
from pi_core.testing.runner import PiRunner, pi_runner

MARKER_EXTENSION = """\
from pathlib import Path
Path(__file__).resolve().parents[2].joinpath("MARKER").write_text("imported")
"""


@pytest.fixture
def pi(tmp_path: Path) -> Iterator[PiRunner]:
    """pi on the Google wire (no SDK to import: quick starts); the project has the marker extension."""
    with pi_runner(tmp_path, "google-generative-ai") as runner:
        extensions = runner.cwd / ".pi" / "extensions"
        extensions.mkdir(parents=True)
        (extensions / "x.py").write_text(MARKER_EXTENSION)
        yield runner


def marker(runner: PiRunner) -> bool:
    return (runner.cwd / "MARKER").exists()


def ask(runner: PiRunner, *args: str, cwd: Path | None = None, prompt: str = "hi") -> tuple[int, str, str]:
    """``pi -p ARGS PROMPT`` with one scripted answer; returns (rc, stdout, stderr)."""
    runner.server.add(Reply(text="hello"))
    if cwd is not None:
        runner.cwd = cwd
    done = runner.run("-p", *args, prompt)
    return done.returncode, done.stdout, done.stderr


def system_prompt(runner: PiRunner, index: int = -1) -> str:
    body = runner.server.requests[index].body
    return "".join(part["text"] for part in body["systemInstruction"]["parts"])


def sent_tools(runner: PiRunner, index: int = -1) -> list[str]:
    body = runner.server.requests[index].body
    return [d["name"] for group in body.get("tools", []) for d in group["functionDeclarations"]]
