"""A local Ray instance the way a user keeps one running (``ray start --head --block``), for tests and benchmarks.

It lives in a temp directory of its own (``RAY_TMPDIR``), so it never meets another Ray on the machine:
``env()`` gives a ``pi batch`` the variables under which Ray finds it with no address (Ray reads the
address ``ray start`` left in ``$RAY_TMPDIR/ray/ray_current_cluster``) or with ``--ray-address auto``.
``stop()`` ends it with SIGTERM, which ``ray start --block`` answers by killing every process it started.
Each of them has ``PI_RAY_HEAD_MARK=<mark>`` in its environment, so a test can prove none is left. Needs the
``ray`` extra.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

MARK = "PI_RAY_HEAD_MARK"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class RayHead:
    """``ray start --head --block`` with ``cpus`` CPUs; ``ignore_sigint`` starts it (and so its workers) with
    SIGINT ignored, as a background job, nohup or a service does."""

    def __init__(self, cpus: int = 2, *, ignore_sigint: bool = False, timeout: float = 180) -> None:
        self.mark = f"pirayhead{uuid.uuid4().hex[:10]}"
        self.temp = Path(tempfile.mkdtemp(prefix="pi-ray-"))  # short: Ray's socket paths have a length limit
        ray = Path(sys.executable).with_name("ray")
        argv = [str(ray), "start", "--head", "--block", "--disable-usage-stats", "--include-dashboard=false",
                f"--num-cpus={cpus}", f"--port={_free_port()}",
                f"--dashboard-agent-listen-port={_free_port()}", f"--metrics-export-port={_free_port()}"]
        env = {**os.environ, **self.env(), MARK: self.mark, "RAY_GRACEFUL_SHUTDOWN_DRAIN_TIMEOUT_S": "0"}
        env.pop("RAY_ADDRESS", None)
        self.log = self.temp / "ray-start.log"
        with self.log.open("wb") as log:
            self.process = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=env,
                preexec_fn=(lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)) if ignore_sigint else None)  # noqa: PLW1509
        self.address = self._wait_for_address(timeout)

    def env(self) -> dict[str, str]:
        """What a process needs to find this instance, and to pass its token check (Ray's default)."""
        return {"RAY_TMPDIR": str(self.temp), "RAY_AUTH_MODE": "token"}

    def _wait_for_address(self, timeout: float) -> str:
        address_file = self.temp / "ray" / "ray_current_cluster"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if address_file.is_file() and (address := address_file.read_text().strip()):
                return address
            if self.process.poll() is not None:
                break
            time.sleep(0.2)
        log = self.log.read_text(errors="replace")[-3000:]
        self.stop()
        raise RuntimeError(f"ray start did not come up:\n{log}")

    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.temp, ignore_errors=True)

