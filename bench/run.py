"""Side-by-side bench of pi against the original Pi: start-up, per-turn overhead, tools on big inputs.

    python -m bench --node-pi /path/to/node_modules/.bin/pi [--runs 5] [--only key,key] [--skip key]

Installs nothing. Finds our ``pi`` (``--pi`` or the script beside this interpreter); the Node Pi runs
only when its path is given. Every scenario runs for both harnesses, alternating which goes first,
``--runs`` times after one untimed warm-up; the table shows medians, the pi/Pi ratio and the median
peak RSS of each child. The table is printed and written into BENCHMARKS.md between the bench
markers (text outside them is kept).
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

if __package__ in (None, ""):  # run as a script: bench/run.py
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.scenarios import SCENARIOS, Scenario, Step, Workspace, request_text
from bench.scenarios_harness import Harness, Sample, find_pi, measure
from pi_core.testing.fake_server import FakeModelServer

REPO = Path(__file__).resolve().parents[1]
BEGIN, END = "<!-- bench:begin -->", "<!-- bench:end -->"
MIB = 1024
REF = "ref"  # label of a scenario's reference runs


@dataclass
class Outcome:
    samples: dict[str, list[Sample]] = field(default_factory=dict)  # harness label -> samples

    def ok(self, label: str) -> list[Sample]:
        return [s for s in self.samples.get(label, []) if s.ok]

    def seconds(self, label: str) -> float | None:
        good = self.ok(label)
        return statistics.median(s.seconds for s in good) if good else None

    def cpu(self, label: str) -> float | None:
        values = [s.cpu_seconds for s in self.ok(label) if s.cpu_seconds is not None]
        return statistics.median(values) if values else None

    def peak_mib(self, label: str) -> float | None:
        peaks = [s.peak_kib for s in self.ok(label) if s.peak_kib is not None]
        return statistics.median(peaks) / MIB if peaks else None

    def problem(self, label: str) -> str:
        bad = [s.problem for s in self.samples.get(label, []) if not s.ok]
        return bad[0] if bad else ""


def run_scenario(scenario: Scenario, ws: Workspace, harnesses: list[Harness], runs: int) -> Outcome:
    chosen = [h for h in harnesses if h.kind in scenario.harnesses]
    steps = {h.label: scenario.build(ws, h) for h in chosen}
    if scenario.reference is not None:
        ours = chosen[0]
        chosen = [*chosen, Harness(REF, ours.argv, ours.kind, ours.root)]
        steps[REF] = scenario.reference(ws, ours)
    outcome = Outcome({h.label: [] for h in chosen})
    total = min(runs, scenario.max_runs or runs)
    for i in range(-1 if scenario.warmup else 0, total):
        order = chosen if i % 2 == 0 else list(reversed(chosen))
        for h in order:
            sample = _one_run(ws, steps[h.label])
            if i >= 0:
                outcome.samples[h.label].append(sample)
            _progress(scenario, h, i, sample)
    return outcome


def _one_run(ws: Workspace, step: Step) -> Sample:
    if step.before is not None:
        step.before()
    ws.server.requests.clear()
    ws.server.add(*step.replies)
    sample = measure(step.child)
    left = ws.server.pending
    if left:
        with ws.server._lock:  # drop this run's unused replies so the next run starts clean
            ws.server._queue.clear()
        if sample.ok:
            sample.ok, sample.problem = False, f"{left} scripted replies were never requested"
    if sample.ok and step.last_request_has is not None:
        last = ws.server.requests[-1].body if ws.server.requests else None
        if step.last_request_has not in request_text(last):
            seen = request_text((last.get("messages") or [None])[-1]) if isinstance(last, dict) else "no request"
            sample.ok, sample.problem = False, (f"the last model request lacks {step.last_request_has!r}; "
                                                f"its last message: {seen[:240]}")
    ws.server.requests.clear()
    return sample


def _progress(scenario: Scenario, h: Harness, i: int, sample: Sample) -> None:
    run = "warm-up" if i < 0 else f"run {i + 1}"
    peak = f"{sample.peak_kib / MIB:7.1f} MiB" if sample.peak_kib else "      ? MiB"
    peak += f"  cpu {sample.cpu_seconds:7.3f} s" if sample.cpu_seconds is not None else ""
    status = "" if sample.ok else f"  FAILED: {sample.problem}"
    print(f"  {scenario.key:<17} {h.label:<3} {run:<8} {sample.seconds:8.3f} s {peak}{status}", flush=True)


# --- the table ----------------------------------------------------------------------------------------


def _fmt_s(value: float | None) -> str:
    if value is None:
        return "—"
    return f"{value * 1000:.1f} ms" if value < 0.1 else f"{value:.2f} s"


def _fmt_mib(value: float | None) -> str:
    return "—" if value is None else f"{value:.0f}"


def _ratio(ours: float | None, theirs: float | None) -> str:
    return f"{ours / theirs:.2f}" if ours and theirs else "—"


def targets(results: dict[str, Outcome], ours: str, theirs: str | None) -> dict[str, tuple[str, bool | None]]:
    """Scenario key -> (target text, met?) for the issue's targets; None when it could not be judged."""
    def s(key: str, label: str | None = ours) -> float | None:
        return results[key].seconds(label) if key in results and label else None

    def mib(key: str) -> float | None:
        return results[key].peak_mib(ours) if key in results else None

    out: dict[str, tuple[str, bool | None]] = {}
    for key in ("version", "help"):
        value = s(key)
        out[key] = ("< 0.15 s", None if value is None else value < 0.15)
    ours_o, theirs_o = s("print-openai"), s("print-openai", theirs)
    out["print-openai"] = ("≤ 0.55× Pi", None if not (ours_o and theirs_o) else ours_o / theirs_o <= 0.55)
    ours_a, bare = s("print-anthropic"), s("print-anthropic", REF)
    out["print-anthropic"] = ("≤ import anthropic + 0.15 s",
                              None if not (ours_a and bare) else ours_a <= bare + 0.15)
    turn = per_turn(results, ours)
    out["per-turn"] = ("< 5 ms", None if turn is None else turn < 0.005)
    for key in results:
        if key.startswith(("bash-", "read-")):
            peak = mib(key)
            out[key] = ("peak RSS < 100 MiB, flat", None if peak is None else peak < 100)
    return out


def per_turn(results: dict[str, Outcome], label: str | None, cpu: bool = False) -> float | None:
    if label is None or "loop-1" not in results or "loop-50" not in results:
        return None
    pick = Outcome.cpu if cpu else Outcome.seconds
    one, fifty = pick(results["loop-1"], label), pick(results["loop-50"], label)
    return None if one is None or fifty is None else (fifty - one) / 49


def table(results: dict[str, Outcome], ours: str, theirs: str | None) -> str:
    checks = targets(results, ours, theirs)
    head = ("| scenario | pi wall | Pi wall | pi/Pi | pi CPU | Pi CPU | pi peak MiB | Pi peak MiB | target | met |\n"
            "|---|---:|---:|---:|---:|---:|---:|---:|---|---|")
    rows = [head]
    labels = {s.key: s.label for s in SCENARIOS}
    by_key = {s.key: s for s in SCENARIOS}
    for key, outcome in results.items():
        rows.append(_row(labels[key], outcome, ours, theirs, checks.get(key)))
        if by_key[key].reference is not None:
            rows.append(_row("↳ " + by_key[key].reference_label, outcome, REF, None, None))
        if key == "loop-50" and "loop-1" in results:
            mine, other = per_turn(results, ours), per_turn(results, theirs)
            mine_cpu, other_cpu = per_turn(results, ours, cpu=True), per_turn(results, theirs, cpu=True)
            rows.append(f"| **harness overhead per tool turn** (T50 − T1)/49 | {_fmt_s(mine)} | {_fmt_s(other)} | "
                        f"{_ratio(mine, other)} | {_fmt_s(mine_cpu)} | {_fmt_s(other_cpu)} |  |  | "
                        f"{_check_cells(checks.get('per-turn'))} |")
    return "\n".join(rows)


def _row(label: str, outcome: Outcome, ours: str, theirs: str | None, check: tuple[str, bool | None] | None) -> str:
    cells = [label]
    for who in (ours, theirs):
        value = outcome.seconds(who) if who else None
        problem = outcome.problem(who) if who else ""
        cells.append(_fmt_s(value) if value is not None or not problem else "failed")
    cells.append(_ratio(outcome.seconds(ours), outcome.seconds(theirs) if theirs else None))
    cells += [_fmt_s(outcome.cpu(ours)), _fmt_s(outcome.cpu(theirs) if theirs else None)]
    cells += [_fmt_mib(outcome.peak_mib(ours)), _fmt_mib(outcome.peak_mib(theirs) if theirs else None)]
    return "| " + " | ".join(cells) + " | " + _check_cells(check) + " |"


def _check_cells(check: tuple[str, bool | None] | None) -> str:
    if check is None:
        return " | "
    text, met = check
    return f"{text} | " + {True: "yes", False: "**no**", None: "?"}[met]


def failures(results: dict[str, Outcome]) -> list[str]:
    lines = []
    for key, outcome in results.items():
        for label, samples in outcome.samples.items():
            bad = [s for s in samples if not s.ok]
            if bad:
                peak = f" (peak RSS {bad[0].peak_kib / MIB:.0f} MiB, {bad[0].seconds:.2f} s)" if bad[0].peak_kib else ""
                lines.append(f"- `{key}` / {label}: {len(bad)} of {len(samples)} runs failed{peak}: {bad[0].problem}")
    return lines


def machine() -> str:
    node = shutil.which("node")
    node_version = subprocess.run([node, "--version"], capture_output=True, text=True, check=False).stdout.strip() if node else "?"
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    return (f"{platform.machine()}, {os.cpu_count()} CPUs, Linux {platform.release()}, Python "
            f"{platform.python_version()}, Node {node_version}; load average at the end {load}")


def write_markdown(path: Path, body: str) -> None:
    old = path.read_text() if path.exists() else ""
    if BEGIN in old and END in old:
        before, rest = old.split(BEGIN, 1)
        after = rest.split(END, 1)[1]
    else:
        before, after = "# Benchmarks\n\n", "\n" + old
    path.write_text(f"{before}{BEGIN}\n{body}\n{END}{after}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--pi", help="our pi (default: the pi script beside this Python)")
    parser.add_argument("--node-pi", help="the original Pi's executable (node_modules/.bin/pi)")
    parser.add_argument("--runs", type=int, default=5, help="timed runs per scenario and harness (default 5)")
    parser.add_argument("--only", help="comma-separated scenario keys")
    parser.add_argument("--skip", help="comma-separated scenario keys to leave out")
    parser.add_argument("--out", default=str(REPO / "BENCHMARKS.md"), help="Markdown file to update")
    parser.add_argument("--no-write", action="store_true", help="print only")
    parser.add_argument("--scratch", help="directory for generated inputs (kept; default: a temp dir)")
    args = parser.parse_args(argv)

    keys = [s.key for s in SCENARIOS]
    wanted = args.only.split(",") if args.only else keys
    skipped = set(args.skip.split(",")) if args.skip else set()
    unknown = [k for k in [*wanted, *skipped] if k not in keys]
    if unknown:
        parser.error(f"unknown scenario(s) {unknown}; known: {', '.join(keys)}")
    chosen = [s for s in SCENARIOS if s.key in wanted and s.key not in skipped]

    scratch = Path(args.scratch) if args.scratch else Path(tempfile.mkdtemp(prefix="pi-bench-"))
    harnesses = [Harness("pi", find_pi(args.pi), "python", scratch / "pi")]
    if args.node_pi:
        harnesses.append(Harness("Pi", [args.node_pi], "node", scratch / "Pi"))
    theirs = "Pi" if args.node_pi else None
    started = time.time()
    results: dict[str, Outcome] = {}
    try:
        with FakeModelServer() as server:
            ws = Workspace(scratch, server)
            for scenario in chosen:
                print(f"{scenario.key}: {scenario.label}", flush=True)
                results[scenario.key] = run_scenario(scenario, ws, harnesses, args.runs)
    finally:
        if not args.scratch:
            shutil.rmtree(scratch, ignore_errors=True)
    command = "python -m bench " + " ".join(a for a in (argv if argv is not None else sys.argv[1:]))
    body = "\n".join([
        (f"Produced by `{command.strip()}` (from the repo root, with the project venv's Python) on "
        f"{time.strftime('%Y-%m-%d %H:%M', time.localtime(started))}, taking {(time.time() - started) / 60:.0f} min."),
        f"Machine: {machine()}.",
        (f"Medians of {args.runs} runs per harness (at most 3 for the 50/200 MB size rows and 2 for the 1 GB "
        "rows, which also skip the warm-up), pi and Pi alternating which goes first, after one untimed "
        "warm-up each. Wall = the child's elapsed time; CPU = its user + system time; peak RSS = its "
        "`/usr/bin/time -f %M` (includes waited-for descendants such as the shell or rg). The fake model "
        "server runs in the bench process: CPU and peak RSS exclude serving, wall includes waiting for it."),
        "", table(results, "pi", theirs), "", *failures(results)])
    print("\n" + body)
    if not args.no_write:
        write_markdown(Path(args.out), body)
        print(f"\nwrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
