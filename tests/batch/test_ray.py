"""``pi batch --executor ray``: on a private Ray instance (what ``pi batch`` starts when none runs) and on one
Ray instance this module shares, kept running with ``ray start`` the way a user does, which ``pi batch``
joins by address, with ``--ray-address auto`` and with no address at all.

Starting Ray costs seconds and a good part of this 2-core machine, so the module starts two in all. The
shared instance ignores SIGINT, as one started by a background job or a service does: Ray interrupts a
cancelled task as SIGINT would, and such a worker used to ignore it and run its task to the end.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from pi_core.testing.ray_head import RayHead

from .conftest import Batch
from .test_local import processes_with, wait_for

pytest.importorskip("ray")

@pytest.fixture(scope="module")
def shared_ray() -> Iterator[RayHead]:
    head = RayHead(2, ignore_sigint=True)
    try:
        yield head
    finally:
        head.stop()
        leftovers = processes_with(head.mark)
        for pid in leftovers:
            os.kill(pid, signal.SIGKILL)
    assert leftovers == [], "ray start left processes behind"


def join(batch: Batch, head: RayHead, *address: str) -> tuple[str, ...]:
    """Options that make ``batch`` run on ``head``: with ``address`` (``--ray-address ...``) or, without,
    the way Ray finds the instance ``ray start`` left running on this machine."""
    batch.pi.extra_env.update(head.env())
    return ("--executor", "ray", *address, "--task-cpus", "0.5")


def ps_with(text: str) -> list[str]:
    """``ps`` lines (command and environment) of live processes that mention ``text``."""
    listing = subprocess.run(["ps", "-e", "e", "-ww", "-o", "pid=,stat=,args="], capture_output=True, text=True,
                             check=True).stdout
    return [line for line in listing.splitlines()
            if text in line and not line.split(None, 2)[1].startswith("Z") and "ps -e e" not in line]


@pytest.fixture
def private_ray(batch: Batch) -> Iterator[str]:
    """A run that finds no Ray instance to join (a temp directory of its own); yields the mark that every
    process it starts, Ray's own included, inherits, so leftovers can be found."""
    value = f"pibatchray{uuid.uuid4().hex[:10]}"
    temp = tempfile.mkdtemp(prefix="pi-ray-")  # short: Ray's socket paths have a length limit
    batch.pi.extra_env.update({"PI_BATCH_TEST_MARK": value, "RAY_TMPDIR": temp})
    yield value
    shutil.rmtree(temp, ignore_errors=True)


@pytest.mark.timeout(300)  # a private Ray start takes 5-20 s and more on a busy machine
def test_twenty_tasks_with_tool_calls_on_a_private_ray_instance(batch: Batch, private_ray: str) -> None:
    mark = private_ray
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
def test_sigterm_cancels_ray_tasks_through_ray_within_seconds(batch: Batch, shared_ray: RayHead,
                                                              silent_git_server: str) -> None:
    tag = f"rayterm{uuid.uuid4().hex[:8]}"  # in every task id, hence in every task process's environment
    batch.tasks({"id": f"{tag}-sleeps", "prompt": f"RUN: sleep 20; : {tag}"},
                # stuck in git clone, where the KeyboardInterrupt of ray.cancel() cannot land: needs force
                {"id": f"{tag}-clones", "prompt": "never sent", "repo": silent_git_server})
    process = batch.popen(*join(batch, shared_ray, "--ray-address", shared_ray.address), "-j", "2")
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
    assert shared_ray.alive()  # a joined instance outlives the run


@pytest.mark.timeout(240)
def test_ctrl_c_cancels_ray_tasks_and_resume_runs_them(batch: Batch, shared_ray: RayHead,
                                                       tmp_path: Path) -> None:
    tag = f"rayint{uuid.uuid4().hex[:8]}"
    go = tmp_path / "go"
    waits = f"RUN: if [ -e {go} ]; then echo resumed; else sh -c 'sleep 300; : {tag}'; fi"
    batch.tasks({"id": "quick", "prompt": "hi"}, *({"id": f"{tag}-{i}", "prompt": waits} for i in range(2)))
    process = batch.popen(*join(batch, shared_ray, "--ray-address", "auto"), "-j", "3")
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
    assert f"ray: joined the Ray cluster at {shared_ray.address} in " in err
    assert sorted(r["status"] for r in batch.results()) == ["cancelled", "cancelled", "ok"]
    assert ps_with(tag) == []
    go.touch()
    resumed = batch.run(*join(batch, shared_ray), "--resume", timeout=180)  # no address: the running instance
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert sorted(r["status"] for r in batch.results()) == ["ok"] * 3
    assert f"ray: joined the Ray cluster at {shared_ray.address} in " in resumed.stderr
    assert "started a private Ray instance" not in resumed.stderr
    assert "start-up " in resumed.stdout and "tasks/min after start-up" in resumed.stdout


def test_a_killed_ray_worker_retries_its_task_and_max_turns_holds_on_ray(batch: Batch, shared_ray: RayHead,
                                                                         tmp_path: Path) -> None:
    tag = f"raykill{uuid.uuid4().hex[:8]}"
    flag = tmp_path / "killed-once"
    # the bash tool's parent is pi; pi's parent is the Ray worker running the task
    kill_worker = f"RUN: if [ ! -e {flag} ]; then touch {flag}; kill -9 $(ps -o ppid= -p $PPID); sleep 5; fi; echo ok"
    loops = f"LOOP: echo {tag}-again"  # calls a tool on every turn, answering at once
    batch.tasks({"id": f"{tag}-victim", "prompt": kill_worker}, {"id": f"{tag}-loops", "prompt": loops,
                                                                  "max_turns": 3})
    result = batch.run(*join(batch, shared_ray, "--ray-address", shared_ray.address), "-j", "2", timeout=300)
    assert result.returncode == 1, result.stderr[-3000:]
    records = batch.by_id()
    assert sorted(records) == [f"{tag}-loops", f"{tag}-victim"]
    assert batch.requests_for(loops) == 3  # max_turns holds on a Ray worker too, counted at the server
    assert records[f"{tag}-loops"]["status"] == "error"
    assert records[f"{tag}-loops"]["error"] == "stopped at max_turns (3)"
    assert records[f"{tag}-victim"]["status"] == "ok" and records[f"{tag}-victim"]["attempts"] == 2
    assert f"retrying {tag}-victim (attempt 2 of 3): the Ray worker died" in result.stderr
    wait_for(lambda: not ps_with(tag), timeout=20, what="the dead attempt's processes to be reaped")
