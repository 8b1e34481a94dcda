"""Shared pieces of the fault and abuse suite.

Tests marked ``@pytest.mark.slow`` (every wire, 1 GB of output, the fork bomb) are skipped unless
``PI_SLOW_TESTS=1``; the rest is the fast CI subset. CLI tests use the Google wire by default because pi
speaks it without importing a vendor SDK, so each ``pi`` start costs about a second, not five.
"""

from __future__ import annotations

import os
import signal
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from pi_core.testing.runner import PiRunner, pi_runner

FAST_WIRE = "google-generative-ai"
ALL_WIRES = ["anthropic-messages", "openai-completions", "openai-responses", "google-generative-ai"]


@pytest.fixture
def pi(tmp_path: Path) -> Iterator[PiRunner]:
    """The real ``pi`` against the fake server on the fast (Google) wire."""
    with pi_runner(tmp_path, FAST_WIRE) as runner:
        yield runner


@pytest.fixture
def marker() -> Iterator[str]:
    """A unique string to put in spawned commands, so the process table can be searched for leftovers.
    Whatever still carries it after the test (a failure) is killed, so one failure does not leak."""
    value = f"pimark{uuid.uuid4().hex[:12]}"
    yield value
    for pid in processes_with(value):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def processes_with(marker: str) -> list[int]:
    """Live (non-zombie) processes whose command line contains ``marker``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker.encode() in cmdline and state != "Z":
            found.append(int(entry.name))
    return found


def wait_until(predicate: Callable[[], object], timeout: float = 15.0) -> bool:
    """Poll ``predicate`` until it is true; False if it never was (no timing is asserted, only the outcome)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.05)
    return bool(predicate())


def assert_no_orphans(marker: str) -> None:
    assert wait_until(lambda: not processes_with(marker)), f"processes left running: {processes_with(marker)}"
