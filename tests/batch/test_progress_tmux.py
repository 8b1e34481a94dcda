"""The live progress display, on a real terminal: ``pi batch`` in tmux, the screen read with capture-pane."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from .conftest import Batch

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


class Pane:
    def __init__(self) -> None:
        self.socket, self.session = f"pibatch-{uuid.uuid4().hex[:8]}", "batch"

    def tmux(self, *args: str) -> str:
        return subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True, timeout=20,
                              check=False).stdout

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-J", "-S", "-200", "-t", self.session)

    def wait_for(self, *texts: str, limit: float = 90) -> str:
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            screen = self.screen()
            if all(text in screen for text in texts):
                return screen
            time.sleep(0.2)
        raise AssertionError(f"{texts!r} never all appeared:\n{self.screen()}")


def test_live_progress_shows_done_running_failed_tokens_and_cost(batch: Batch, tmp_path: Path) -> None:
    go = tmp_path / "go"
    hold = f"RUN: while [ ! -e {go} ]; do sleep 0.2; done; echo released"
    batch.tasks({"id": "first", "prompt": "hi"}, {"id": "broken", "prompt": "FAIL: quota exceeded"},
                {"id": "held-a", "prompt": hold}, {"id": "held-b", "prompt": hold}, {"id": "last", "prompt": "x"})
    env = " ".join(f"{k}={shlex.quote(v)}" for k, v in batch.pi.env().items() if k.startswith(("PI_", "PATH",
                                                                                            "PYTHON", "HOME")))
    command = " ".join(shlex.quote(a) for a in batch.pi.command(*batch.argv("-j", "2")))
    pane = Pane()
    pane.tmux("new-session", "-d", "-s", pane.session, "-x", "120", "-y", "40", "-c", str(batch.pi.cwd),
              f"env {env} {command}; echo EXIT=$?; sleep 600")
    try:
        running = pane.wait_for("done 2", "running 2", "failed 1", "held-a", "held-b", "turn 1", "queued 1")
        counters = next(line for line in running.splitlines() if line.startswith("done 2"))
        tokens = int(re.search(r"tokens (\d+)", counters).group(1))  # type: ignore[union-attr]
        assert tokens >= 50 + 110  # the finished task's and the running sessions' tokens so far
        assert re.search(r"cost \$0\.0\d*[1-9]", counters)
        assert "error     broken: " in running and "quota" in running
        go.touch()
        final = pane.wait_for("EXIT=1", "5 task(s): 4 ok, 1 error")
        assert "done 5" in final and "running 0" in final and "5/5" in final
        (tmp_path / "screen.txt").write_text(running + "\n---\n" + final)
    finally:
        pane.tmux("kill-server")
