"""``pi batch --executor ray`` on a private local Ray cluster (``ray.init`` starts one in seconds here).

CI runs the 20-task test; the killed-worker and Ctrl-C tests on Ray are slow (PI_SLOW_TESTS=1).
"""

from __future__ import annotations

import signal
import uuid
from pathlib import Path

import pytest

from .conftest import Batch
from .test_local import processes_with, wait_for

pytest.importorskip("ray")


def _mark(batch: Batch) -> str:
    """Every process the run starts (Ray's own included) inherits this, so leftovers can be found."""
    value = f"pibatchray{uuid.uuid4().hex[:10]}"
    batch.pi.extra_env["PI_BATCH_TEST_MARK"] = value
    return value


@pytest.mark.timeout(300)  # as long as the run's own limit: a private Ray start takes 10-20 s and more on a busy machine
def test_twenty_tasks_with_tool_calls_on_a_local_ray_cluster(batch: Batch) -> None:
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
    assert "ray ×3" in result.stderr
    assert processes_with(mark) == []  # the private cluster and every task ended with the run


@pytest.mark.slow
def test_a_killed_ray_worker_makes_its_task_retry_and_complete_once(batch: Batch, tmp_path: Path) -> None:
    mark = _mark(batch)
    flag = tmp_path / "killed-once"
    # the bash tool's parent is pi; pi's parent is the Ray worker running the task
    kill_worker = f"RUN: if [ ! -e {flag} ]; then touch {flag}; kill -9 $(ps -o ppid= -p $PPID); sleep 5; fi; echo ok"
    batch.tasks({"id": "victim", "prompt": kill_worker}, {"id": "other", "prompt": "RUN: echo fine"})
    result = batch.run("--executor", "ray", "--task-cpus", "0.5", "-j", "2", timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    records = batch.results()
    assert sorted(r["id"] for r in records) == ["other", "victim"]
    victim = next(r for r in records if r["id"] == "victim")
    assert victim["status"] == "ok" and victim["attempts"] == 2
    assert "retrying victim (attempt 2 of 3): the Ray worker died" in result.stderr
    assert processes_with(mark) == []


@pytest.mark.slow
def test_interrupt_cancels_ray_tasks(batch: Batch) -> None:
    mark = _mark(batch)
    batch.tasks({"id": "quick", "prompt": "hi"},
                *({"id": f"wait-{i}", "prompt": f"RUN: sh -c 'sleep 300; : {mark}'"} for i in range(3)))
    process = batch.popen("--executor", "ray", "--task-cpus", "0.5", "-j", "3")
    try:
        wait_for(lambda: "quick" in batch.by_id(), timeout=120, what="the quick task's result")
        wait_for(lambda: len(processes_with(f": {mark}")) >= 3, timeout=60, what="three waiting tools")
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=90)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130, err[-3000:]
    records = batch.by_id()
    assert records["quick"]["status"] == "ok"
    assert sorted(r["status"] for r in records.values()) == ["cancelled"] * 3 + ["ok"]
    assert processes_with(mark) == []
