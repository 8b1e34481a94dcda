"""The sandbox's cost per tool call, side by side with ``off`` (run by hand; issue 35's goal: <= 10 ms per bash call).

    .venv/bin/python bench/sandbox.py [--calls 40] [--rounds 5]

One process runs the real ``bash``, ``read`` and ``write`` tools with each configuration in turn: no sandbox,
then ``workspace-write`` under bubblewrap (network off, on, and a host list, which adds pi's proxy bridge), and
under Landlock (network off), skipping those this machine cannot run. The configurations take turns for
``--rounds`` rounds of ``--calls`` calls each, so a noisy moment hits them all; the table shows the median and
90th percentile per call, the median's difference from ``off``, and the median CPU per call (user + system of
pi and the processes it waited for: steadier than wall time on a busy machine). Times cover the tool call only
(the sandbox's start, once per pi start, is in a second table: finding and probing the mechanism, then
``activate`` and the first bash call, which under bubblewrap joins the run's network namespace).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pi_core.toolkit.sandbox import (
    DEFAULT_DENY_READ,
    SandboxError,
    SandboxPolicy,
    activate,
)

if TYPE_CHECKING:
    from pi_core.toolkit.sandbox import Sandbox

GOAL_MS = 10.0


@dataclass
class Config:
    label: str
    sandbox: Sandbox | None
    built_s: float = 0.0  # pi_sandbox(policy): finding and probing the mechanism
    started_s: float = 0.0  # activate() and the first bash call (which joins the run's network namespace)


def configs(workspace: str) -> tuple[list[Config], list[str]]:
    """Every configuration this machine can run, and why the others are left out."""
    import pi_plugins.sandbox.bwrap
    import pi_plugins.sandbox.landlock  # noqa: F401 - imported before the clock runs, as pi_sandbox imports them
    from pi_plugins.sandbox import pi_sandbox

    deny = tuple(os.path.realpath(os.path.expanduser(p)) for p in DEFAULT_DENY_READ)
    base = SandboxPolicy(mode="workspace-write", workspace=workspace, writable_roots=(workspace,), deny_read=deny,
                         source="bench")
    wanted: list[tuple[str, SandboxPolicy]] = [
        ("bubblewrap, network off", replace(base, mechanism="bubblewrap")),
        ("bubblewrap, network on", replace(base, mechanism="bubblewrap", network="on")),
        ("bubblewrap, host list (proxy)", replace(base, mechanism="bubblewrap", network=("example.invalid",))),
        ("landlock, network off", replace(base, mechanism="landlock")),
    ]
    found, skipped = [Config("off", None)], []
    for label, policy in wanted:
        try:
            started = time.perf_counter()
            sandbox = pi_sandbox(policy)
            found.append(Config(label, sandbox, built_s=time.perf_counter() - started))
        except SandboxError as err:
            skipped.append(f"{label}: {err}")
    return found, skipped


def operations(workspace: Path) -> dict[str, Callable[[], Any]]:
    """One call of each tool, as the agent loop makes it."""
    import importlib

    import pi_core.types  # noqa: F401 - loaded in any running agent
    from pi_core.tools import ToolContext

    ctx = ToolContext(cwd=workspace, on_update=lambda partial: None)
    tools = {name: importlib.import_module(f"builtin_tools.{name}").TOOL for name in ("bash", "read", "write")}
    (workspace / "small.txt").write_text("".join(f"line {i}\n" for i in range(200)))
    return {
        "bash `true`": lambda: tools["bash"].execute({"command": "true"}, ctx),
        "bash `echo hi; ls`": lambda: tools["bash"].execute({"command": "echo hi; ls > /dev/null"}, ctx),
        "read 200 lines": lambda: tools["read"].execute({"path": "small.txt"}, ctx),
        "write 1 KB": lambda: tools["write"].execute({"path": "out.txt", "content": "x" * 1024}, ctx),
    }


def _cpu() -> float:
    mine, waited = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return mine.ru_utime + mine.ru_stime + waited.ru_utime + waited.ru_stime


def run(calls: int, rounds: int) -> int:
    with tempfile.TemporaryDirectory(prefix="pi-bench-sandbox-") as tmp:
        workspace = Path(os.path.realpath(tmp))
        found, skipped = configs(str(workspace))
        ops = operations(workspace)
        samples: dict[tuple[str, str], list[float]] = {(c.label, op): [] for c in found for op in ops}
        cpu: dict[tuple[str, str], list[float]] = {key: [] for key in samples}
        first_bash = next(iter(ops.values()))
        first_bash()  # the tool's own imports, which are no cost of the sandbox
        for round_no in range(rounds):
            for config in found:
                started = time.perf_counter()
                activate(config.sandbox)
                try:
                    if round_no == 0:
                        first_bash()
                        config.started_s = time.perf_counter() - started
                    for op_name, operation in ops.items():
                        operation()  # warm: the first call after a start builds what is cached
                        for _ in range(calls):
                            started, used = time.perf_counter(), _cpu()
                            operation()
                            samples[(config.label, op_name)].append(time.perf_counter() - started)
                            cpu[(config.label, op_name)].append(_cpu() - used)
                finally:
                    activate(None)
    print(f"{rounds} rounds x {calls} calls per configuration and tool; Python {sys.version.split()[0]}, "
          f"{os.cpu_count()} CPUs, load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}\n")
    print(f"| {'call':<22} | {'configuration':<30} | {'median':>9} | {'p90':>9} | {'vs off':>9} | {'CPU':>9} |")
    print(f"|{'-' * 24}|{'-' * 32}|{'-' * 10}:|{'-' * 10}:|{'-' * 10}:|{'-' * 10}:|")
    worst = 0.0
    for op_name in ops:
        plain = statistics.median(samples[("off", op_name)])
        for config in found:
            values = sorted(samples[(config.label, op_name)])
            median, p90 = statistics.median(values), values[int(len(values) * 0.9) - 1]
            extra = (median - plain) * 1000
            if op_name.startswith("bash") and config.sandbox is not None:
                worst = max(worst, extra)
            shown = "" if config.sandbox is None else f"{extra:+.1f} ms"
            used = statistics.median(cpu[(config.label, op_name)]) * 1000
            print(f"| {op_name:<22} | {config.label:<30} | {median * 1000:6.2f} ms | {p90 * 1000:6.2f} ms | "
                  f"{shown:>9} | {used:6.2f} ms |")
    print(f"\n| {'once per pi start':<30} | {'find + probe':>12} | {'start + first bash':>18} |")
    print(f"|{'-' * 32}|{'-' * 13}:|{'-' * 19}:|")
    for config in found:
        print(f"| {config.label:<30} | {config.built_s * 1000:9.1f} ms | {config.started_s * 1000:15.1f} ms |")
    for reason in skipped:
        print(f"skipped: {reason}")
    print(f"\nworst bash overhead (median): {worst:.1f} ms; goal <= {GOAL_MS:.0f} ms: "
          f"{'met' if worst <= GOAL_MS else 'missed'}")
    return 0 if worst <= GOAL_MS else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=40, help="timed calls per tool, configuration and round")
    parser.add_argument("--rounds", type=int, default=5, help="rounds in which the configurations take turns")
    options = parser.parse_args()
    return run(options.calls, options.rounds)


if __name__ == "__main__":
    sys.exit(main())
