"""What one codemode script costs before it does anything (run by hand): a worker process started, QuickJS set
up with the prelude, ``return 1`` run, the worker gone, through ``run_script`` as the tool runs it; and a script
that makes N tool calls at once, answered on the event loop.

    .venv/bin/python bench/codemode.py [--rounds 20] [--calls 50]

Prints the median and 90th percentile wall time of each, and the median CPU of the workers (user + system of
the waited-for children: steadier than wall time on a busy machine).
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import statistics
import sys
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def _job(code: str) -> Any:
    from pi_plugins.codemode.sandbox import Job

    async def echo(args: Any, _signal: Any) -> Any:
        return args

    return Job(code=code, tools=[{"name": "echo", "jsName": "echo", "description": ""}], globals=[], store={},
               executors={("tool", "echo"): echo})


async def _once(code: str) -> tuple[float, float]:
    from pi_plugins.codemode.sandbox import SLOTS, run_script

    from pi_core.signals import AbortSignal

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    assert await SLOTS.acquire(60, AbortSignal()) == "reserved"
    outcome = await run_script(_job(code), None, AbortSignal())
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert outcome.error is None, outcome.error
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--calls", type=int, default=50)
    options = parser.parse_args()
    cases = {"return 1": "return 1",
             f"{options.calls} parallel calls": f"return (await Promise.all(Array.from({{length: {options.calls}}}, "
                                               "(_, i) => tools.echo({i})))).length"}
    print(f"{'script':<24} {'median ms':>10} {'p90 ms':>8} {'worker CPU ms':>14}")
    for name, code in cases.items():
        runs = [asyncio.run(_once(code)) for _ in range(options.rounds)]
        walls = sorted(r[0] * 1000 for r in runs)
        cpu = statistics.median(r[1] * 1000 for r in runs)
        print(f"{name:<24} {statistics.median(walls):>10.0f} {walls[int(len(walls) * 0.9) - 1]:>8.0f} {cpu:>14.0f}")


if __name__ == "__main__":
    main()
