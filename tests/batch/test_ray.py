"""``pi batch --executor ray``: on a private Ray instance (what ``pi batch`` starts when none runs) and on one
Ray instance this module shares, the way a user keeps one running and joins it with ``--ray-address``.

Starting Ray costs seconds and a good part of this 2-core machine, so the module starts two in all. The
shared instance ignores SIGINT, as one started by a background job or a service does: Ray interrupts a
cancelled task as SIGINT would, and such a worker used to ignore it and run its task to the end.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from .conftest import Batch
from .test_local import processes_with, wait_for

pytest.importorskip("ray")

# Keeps a Ray instance up until its stdin closes; ray.shutdown() then ends every process it started.
_HOLD_RAY = """
import logging, sys
import ray
ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level=logging.WARNING)
print(ray.get_runtime_context().gcs_address, flush=True)
sys.stdin.read()
ray.shutdown()
"""


class SharedRay:
    def __init__(self) -> None:
        self.mark = f"pibatchshared{uuid.uuid4().hex[:10]}"
        env = {**os.environ, "PI_BATCH_TEST_MARK": self.mark, "RAY_AUTH_MODE": "token"}
        self.process = subprocess.Popen(
            [sys.executable, "-c", _HOLD_RAY], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))  # noqa: PLW1509 - before exec only
        assert self.process.stdout is not None
        self.address = self.process.stdout.readline().strip()
        assert self.address, "the shared Ray instance did not start"

    def join(self, batch: Batch) -> tuple[str, ...]:
        """Options that make ``batch`` run on this instance."""
        batch.pi.extra_env["RAY_AUTH_MODE"] = "token"  # the instance checks a token (Ray's default now)
        return ("--executor", "ray", "--ray-address", self.address, "--task-cpus", "0.5")

    def stop(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            self.process.wait(60)
        except subprocess.TimeoutExpired:
            self.process.kill()
        for pid in processes_with(self.mark):  # only if shutdown failed: Ray processes this module started
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


@pytest.fixture(scope="module")
def shared_ray() -> Iterator[SharedRay]:
    ray = SharedRay()
    try:
        yield ray
    finally:
        ray.stop()


def ps_with(text: str) -> list[str]:
    """``ps`` lines (command and environment) of live processes that mention ``text``."""
    listing = subprocess.run(["ps", "-e", "e", "-ww", "-o", "pid=,stat=,args="], capture_output=True, text=True,
                             check=True).stdout
    return [line for line in listing.splitlines()
            if text in line and not line.split(None, 2)[1].startswith("Z") and "ps -e e" not in line]


def _mark(batch: Batch) -> str:
    """Every process a private run starts (Ray's own included) inherits this, so leftovers can be found."""
    value = f"pibatchray{uuid.uuid4().hex[:10]}"
    batch.pi.extra_env["PI_BATCH_TEST_MARK"] = value
    return value


@pytest.mark.timeout(300)  # a private Ray start takes 5-20 s and more on a busy machine
def test_twenty_tasks_with_tool_calls_on_a_private_ray_instance(batch: Batch) -> None:
    mark = _mark(batch)
    batch.tasks(*({"id": f"ray-{i:02d}", "prompt": f"RUN: echo ray-hello-{i}"} for i in range(20)))
    result = batch.run("--executor", "ray", "--task-cpus", "0.5", "-j", "3", timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    records = batch.results()
    assert sorted(r["id"] for r in records) == [f"ray-{i:02d}" for i in range(20)]
    for record in records:
        n = int(record["id"].split("-")[1])
        assert record["status"] == "ok" and f"ray-hello-{n}\\n" in record["answer"]
        assert record["turns"] == 2 and record["usage"]["total_tokens"] == 230
        assert (batch.out / record["session"]).is_file()  # the session came back from the worker
    assert "20 task(s): 20 ok" in result.stdout
    assert "ray ×3" in result.stderr and "ray: started a private Ray instance in " in result.stderr
    # the start-up is reported apart from the tasks' time, and the rate is over the tasks' time
    assert "start-up " in result.stdout and "tasks/min after start-up" in result.stdout
    assert not (batch.out / "workspaces" / ".pi-batch-sessions").exists()
    assert processes_with(mark) == []  # the private instance and every task ended with the run


@pytest.fixture
def silent_git_server() -> Iterator[str]:
    """A URL whose server accepts connections and never answers: a git clone from it hangs in C code."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(8)
        yield f"http://127.0.0.1:{server.getsockname()[1]}/repo.git"


@pytest.mark.timeout(240)
def test_sigterm_cancels_ray_tasks_through_ray_within_seconds(batch: Batch, shared_ray: SharedRay,
                                                              silent_git_server: str) -> None:
    tag = f"rayterm{uuid.uuid4().hex[:8]}"  # in every task id, hence in every task process's environment
    batch.tasks({"id": f"{tag}-sleeps", "prompt": f"RUN: sleep 20; : {tag}"},
                # stuck in git clone, where the KeyboardInterrupt of ray.cancel() cannot land: needs force
                {"id": f"{tag}-clones", "prompt": "never sent", "repo": silent_git_server})
    process = batch.popen(*shared_ray.join(batch), "-j", "2")
    try:
        wait_for(lambda: any("sleep 20" in line for line in ps_with(tag)), timeout=120, what="the sleeping tool")
        wait_for(lambda: any(" git" in line for line in ps_with(tag)), timeout=60, what="the hanging clone")
        signalled = time.monotonic()
        process.send_signal(signal.SIGTERM)
        wait_for(lambda: len(batch.results()) == 2, timeout=30, what="both results")
        cancelled_in = time.monotonic() - signalled
        _, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    print(err, cancelled_in, batch.results())
    assert process.returncode == 128 + signal.SIGTERM, err[-3000:]
    assert cancelled_in < 10, err[-3000:]
    assert f"ray: joined the Ray cluster at {shared_ray.address} in " in err
    assert "SIGTERM: cancelling 2 running task(s)" in err
    records = batch.by_id()
    sleeper, cloner = records[f"{tag}-sleeps"], records[f"{tag}-clones"]
    assert sleeper["status"] == "cancelled" and sleeper["error"] == "cancelled before the task finished"
    assert sleeper["turns"] == 1 and sleeper["session"] is not None  # the interrupted task reported back
    assert cloner["status"] == "cancelled" and cloner["error"] == "cancelled before the task finished"
    assert ps_with(tag) == []  # no pi, tool or git of either task lives on
    assert shared_ray.process.poll() is None  # a joined instance outlives the run


@pytest.mark.timeout(240)
def test_ctrl_c_cancels_ray_tasks_and_resume_runs_them(batch: Batch, shared_ray: SharedRay,
                                                       tmp_path: Path) -> None:
    tag = f"rayint{uuid.uuid4().hex[:8]}"
    go = tmp_path / "go"
    waits = f"RUN: if [ -e {go} ]; then echo resumed; else sh -c 'sleep 300; : {tag}'; fi"
    batch.tasks({"id": "quick", "prompt": "hi"}, *({"id": f"{tag}-{i}", "prompt": waits} for i in range(2)))
    process = batch.popen(*shared_ray.join(batch), "-j", "3")
    try:
        wait_for(lambda: "quick" in batch.by_id(), timeout=120, what="the quick task's result")
        wait_for(lambda: len([line for line in ps_with(f": {tag}") if "sleep 300" in line]) >= 2, timeout=60,
                 what="two waiting tools")
        process.send_signal(signal.SIGINT)  # to pi batch alone: the Ray workers are in no terminal's group
        _, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130, err[-3000:]
    assert sorted(r["status"] for r in batch.results()) == ["cancelled", "cancelled", "ok"]
    assert ps_with(tag) == []
    go.touch()
    resumed = batch.run(*shared_ray.join(batch), "--resume", timeout=180)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert sorted(r["status"] for r in batch.results()) == ["ok"] * 3


def test_a_killed_ray_worker_makes_its_task_retry_and_complete_once(batch: Batch, shared_ray: SharedRay,
                                                                    tmp_path: Path) -> None:
    tag = f"raykill{uuid.uuid4().hex[:8]}"
    flag = tmp_path / "killed-once"
    # the bash tool's parent is pi; pi's parent is the Ray worker running the task
    kill_worker = f"RUN: if [ ! -e {flag} ]; then touch {flag}; kill -9 $(ps -o ppid= -p $PPID); sleep 5; fi; echo ok"
    batch.tasks({"id": f"{tag}-victim", "prompt": kill_worker}, {"id": f"{tag}-other", "prompt": "RUN: echo fine"})
    result = batch.run(*shared_ray.join(batch), "-j", "2", timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    records = batch.by_id()
    assert sorted(records) == [f"{tag}-other", f"{tag}-victim"]
    assert records[f"{tag}-victim"]["status"] == "ok" and records[f"{tag}-victim"]["attempts"] == 2
    assert f"retrying {tag}-victim (attempt 2 of 3): the Ray worker died" in result.stderr
    wait_for(lambda: not ps_with(tag), timeout=20, what="the dead attempt's processes to be reaped")
