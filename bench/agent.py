"""Harness overhead, measured side by side in one run (run by hand: ``python bench/agent.py``).

- ``pi --help`` / ``pi --version`` wall time (median of N runs);
- print mode with one scripted answer, per wire (start-up to exit), next to the bare SDK import time;
- per-turn harness overhead over a 50-turn scripted tool loop: total wall time of the run minus the time
  the fake server spent answering, divided by the turns (the server sets TCP_NODELAY).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pi_core.testing.fake_server import FakeModelServer, Reply

PI = [sys.executable, "-c", "from pi_core.app.cli import cli; cli()"]
RUNS = int(os.environ.get("BENCH_RUNS", "5"))


def timed(command: list[str], env: dict[str, str] | None = None, cwd: str | None = None) -> float:
    start = time.perf_counter()
    subprocess.run(command, capture_output=True, env=env, cwd=cwd, check=False, stdin=subprocess.DEVNULL)
    return time.perf_counter() - start


def median(command: list[str], **kw: object) -> float:
    return statistics.median(timed(command, **kw) for _ in range(RUNS))  # type: ignore[arg-type]


def write_models(home: Path, url: str, api: str) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "models.json").write_text(json.dumps({"providers": {"fake": {
        "baseUrl": url, "api": api, "apiKey": "k",
        "models": [{"id": "fake-model", "reasoning": False, "input": ["text"]}]}}}))


def main() -> None:
    print(f"{'scenario':<48} {'median':>10}")
    print(f"{'pi --help':<48} {median(PI + ['--help']) * 1000:>8.0f}ms")
    print(f"{'pi --version':<48} {median(PI + ['--version']) * 1000:>8.0f}ms")
    for sdk in ("anthropic", "openai"):
        print(f"{'bare import ' + sdk:<48} {median([sys.executable, '-c', f'import {sdk}']) * 1000:>8.0f}ms")
    with tempfile.TemporaryDirectory() as tmp, FakeModelServer() as server:
        for api in ("anthropic-messages", "openai-completions", "openai-responses"):
            home = Path(tmp) / api
            write_models(home, server.base_url_for(api), api)
            env = {**os.environ, "PI_CODING_AGENT_DIR": str(home)}
            samples = []
            for _ in range(RUNS):
                server.add(Reply(text="ok"))
                samples.append(timed(PI + ["--provider", "fake", "--model", "fake-model", "--no-session", "-p", "hi"],
                                     env=env, cwd=tmp))
            print(f"{'print mode, one answer, ' + api:<48} {statistics.median(samples) * 1000:>8.0f}ms")

        api = "openai-completions"
        home = Path(tmp) / api
        env = {**os.environ, "PI_CODING_AGENT_DIR": str(home)}
        turns = 50
        Path(tmp, "f.txt").write_text("x\n")
        for _ in range(turns):
            server.add(Reply(tool_calls=[("read", {"path": "f.txt"})]))
        server.add(Reply(text="done"))
        server.add(Reply(text="ok"))
        baseline = timed(PI + ["--provider", "fake", "--model", "fake-model", "--no-session", "-p", "hi"],
                         env=env, cwd=tmp)
        server.requests.clear()
        start = time.perf_counter()
        subprocess.run(PI + ["--provider", "fake", "--model", "fake-model", "--no-session", "-p", "go"],
                       capture_output=True, env=env, cwd=tmp, check=False, stdin=subprocess.DEVNULL)
        total = time.perf_counter() - start
        per_turn = (total - baseline) / turns
        print(f"{'50-turn tool loop, total':<48} {total * 1000:>8.0f}ms")
        print(f"{'harness overhead per tool turn (incl. HTTP)':<48} {per_turn * 1000:>8.1f}ms")


if __name__ == "__main__":
    main()
