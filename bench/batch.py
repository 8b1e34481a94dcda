"""Tasks per minute: ``pi batch`` against running the same tasks one by one (run by hand).

    python bench/batch.py [--tasks 12] [--latency 0,2] [--jobs 1,2,4,8] [--ray]

Each task is a two-turn session with one bash tool call (the fake model server answers on the Google
wire). "one by one" is what a script without pi batch does: ``pi -p PROMPT`` per task, in sequence.
``--latency S`` makes every model reply take about S seconds (spread over its stream), as a real model's
does; with 0 the figures are pi's own start-up and turn overhead, bound by this machine's cores.
"""

from __future__ import annotations

import argparse
import json
import os
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


def batch(tasks: int, cwd: Path, env: dict[str, str], *extra: str) -> float:
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
    return wall


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=12)
    parser.add_argument("--latency", default="0,2", help="comma-separated model latencies per reply, seconds")
    parser.add_argument("--jobs", default="1,2,4,8")
    parser.add_argument("--ray", action="store_true", help="also time --executor ray (includes ray.init)")
    args = parser.parse_args()
    rows: list[tuple[str, str, float]] = []
    for latency in (float(v) for v in args.latency.split(",")):
        with tempfile.TemporaryDirectory(prefix="pi-bench-batch-") as tmp, \
                FakeModelServer(responder=responder(latency)) as server:
            home, cwd = Path(tmp) / "agent", Path(tmp) / "project"
            cwd.mkdir()
            write_models(home, server.base_url_for(WIRE), WIRE)
            env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
            env["PI_CODING_AGENT_DIR"] = str(home)
            label = f"{latency:g} s"
            rows.append((label, "one by one (pi -p per task)", one_by_one(args.tasks, cwd, env)))
            for jobs in args.jobs.split(","):
                rows.append((label, f"pi batch -j {jobs}", batch(args.tasks, cwd, env, "-j", jobs)))
            if args.ray:
                rows.append((label, "pi batch --executor ray --task-cpus 0.25 -j 8",
                             batch(args.tasks, cwd, env, "--executor", "ray", "--task-cpus", "0.25", "-j", "8")))
    print(f"{args.tasks} tasks of 2 turns + 1 bash call each; {os.cpu_count()} CPUs")
    print("| model latency per reply | how | wall | tasks/min | speed-up |")
    print("|---|---|---:|---:|---:|")
    base: dict[str, float] = {}
    for label, how, wall in rows:
        base.setdefault(label, wall)
        print(f"| {label} | {how} | {wall:.1f} s | {args.tasks / wall * 60:.1f} | {base[label] / wall:.2f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
