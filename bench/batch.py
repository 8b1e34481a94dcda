"""Tasks per minute: ``pi batch`` against running the same tasks one by one (run by hand).

    python bench/batch.py [--tasks 12] [--latency 0,2] [--jobs 1,2,4,8] [--ray]
    python bench/batch.py --tasks 20 --latency 0 --jobs 1,2 --ray    # when Ray pays off (BENCHMARKS.md)

Each task is a two-turn session with one bash tool call (the fake model server answers on the Google
wire). "one by one" is what a script without pi batch does: ``pi -p PROMPT`` per task, in sequence.
``--latency S`` makes every model reply take about S seconds (spread over its stream), as a real model's
does; with 0 the figures are pi's own start-up and turn overhead, bound by this machine's cores.
``--ray`` adds two Ray rows: a private instance that ``pi batch`` starts (and stops) itself, and an instance
kept running with ``ray start`` that it joins (``--ray-address auto``); the start-up column is what the
run's summary reports for starting or joining Ray, apart from the tasks' time.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from pi_core.testing.fake_server import FakeModelServer, RecordedRequest, Reply
from pi_core.testing.pi_home import FAKE_MODEL, FAKE_PROVIDER, write_models

PI = [sys.executable, "-c", "from pi_core.app.cli import cli; cli()", "--provider", FAKE_PROVIDER, "--model",
      FAKE_MODEL]
WIRE = "google-generative-ai"


def responder(latency: float) -> Any:
    def reply(request: RecordedRequest) -> Reply:
        contents = (request.body or {}).get("contents") or []
        last = contents[-1]["parts"] if contents else []
        text_frames = 8  # roughly: the stream's frames for a short reply at chunk_size 4
        delay = latency / text_frames
        if any("functionResponse" in part for part in last if isinstance(part, dict)):
            return Reply(text="done: the command printed its output", chunk_delay=delay)
        return Reply(text="let me run it", tool_calls=[("bash", {"command": "echo hello && ls"})], chunk_delay=delay)

    return reply


def one_by_one(tasks: int, cwd: Path, env: dict[str, str]) -> float:
    started = time.perf_counter()
    for i in range(tasks):
        subprocess.run([*PI, "-p", f"task {i}"], cwd=cwd, env=env, capture_output=True, check=True,
                       stdin=subprocess.DEVNULL)
    return time.perf_counter() - started


def batch(tasks: int, cwd: Path, env: dict[str, str], *extra: str) -> tuple[float, float]:
    """Wall time of one ``pi batch`` run, and the start-up its summary reports (0 for local runs)."""
    path = cwd / "tasks.jsonl"
    path.write_text("".join(json.dumps({"id": f"t{i}", "prompt": f"task {i}"}) + "\n" for i in range(tasks)))
    out = cwd / "out"
    shutil.rmtree(out, ignore_errors=True)
    started = time.perf_counter()
    done = subprocess.run([*PI, "batch", str(path), "--out", str(out), "--no-progress", *extra], cwd=cwd, env=env,
                          capture_output=True, text=True, stdin=subprocess.DEVNULL, check=False)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"pi batch failed ({done.returncode}):\n{done.stderr[-2000:]}")
    startup = re.search(r"start-up ([0-9.]+)s", done.stdout)
    return wall, float(startup.group(1)) if startup else 0.0


def ray_rows(tasks: int, cwd: Path, env: dict[str, str]) -> list[tuple[str, float, float]]:
    from pi_core.testing.ray_head import RayHead

    options = ("--executor", "ray", "--task-cpus", "0.5")
    private_tmp = tempfile.mkdtemp(prefix="pi-ray-")  # no instance to join there: pi batch starts its own
    try:
        private = batch(tasks, cwd, {**env, "RAY_TMPDIR": private_tmp}, *options)
    finally:
        shutil.rmtree(private_tmp, ignore_errors=True)
    head = RayHead(2)
    try:
        batch(tasks, cwd, {**env, **head.env()}, *options, "--ray-address", "auto")  # warms the workers
        reused = batch(tasks, cwd, {**env, **head.env()}, *options, "--ray-address", "auto")
    finally:
        head.stop()
    return [(f"pi batch --executor ray {' '.join(options[2:])}: private instance", *private),
            ("same, joining a running instance (--ray-address auto)", *reused)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=12)
    parser.add_argument("--latency", default="0,2", help="comma-separated model latencies per reply, seconds")
    parser.add_argument("--jobs", default="1,2,4,8")
    parser.add_argument("--ray", action="store_true",
                        help="also time --executor ray, private and on a running instance")
    args = parser.parse_args()
    rows: list[tuple[str, str, float, float]] = []
    for latency in (float(v) for v in args.latency.split(",")):
        with tempfile.TemporaryDirectory(prefix="pi-bench-batch-") as tmp, \
                FakeModelServer(responder=responder(latency)) as server:
            home, cwd = Path(tmp) / "agent", Path(tmp) / "project"
            cwd.mkdir()
            write_models(home, server.base_url_for(WIRE), WIRE)
            env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
            env["PI_CODING_AGENT_DIR"] = str(home)
            label = f"{latency:g} s"
            rows.append((label, "one by one (pi -p per task)", one_by_one(args.tasks, cwd, env), 0.0))
            for jobs in args.jobs.split(","):
                rows.append((label, f"pi batch -j {jobs}", *batch(args.tasks, cwd, env, "-j", jobs)))
            if args.ray:
                rows += [(label, how, wall, startup) for how, wall, startup in ray_rows(args.tasks, cwd, env)]
    print(f"{args.tasks} tasks of 2 turns + 1 bash call each; {os.cpu_count()} CPUs")
    print("| model latency per reply | how | wall | start-up | tasks/min | after start-up | speed-up |")
    print("|---|---|---:|---:|---:|---:|---:|")
    base: dict[str, float] = {}
    for label, how, wall, startup in rows:
        base.setdefault(label, wall)
        after = args.tasks / (wall - startup) * 60 if wall > startup else 0.0
        print(f"| {label} | {how} | {wall:.1f} s | {startup:.1f} s | {args.tasks / wall * 60:.1f} | {after:.1f} "
              f"| {base[label] / wall:.2f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
