"""Side-by-side bench of pi against the original Pi 1.6.0 and 0.73.1: start-up, per-turn overhead, tools.

    python -m bench --pi16 "NODE22 PI16/dist/bundle/cli.js" --node-pi PI073/node_modules/.bin/pi [--runs 5]
                    [--only key,key] [--skip key]

Installs nothing. Finds our ``pi`` (``--pi`` or the script beside this interpreter); each Node Pi runs
only when its command is given (a path, or a quoted command line: Pi 1.6.0 needs Node 22). Every
scenario runs for every harness, rotating which goes first, ``--runs`` times after one untimed
warm-up; the table shows medians, pi/Pi 1.6.0 ratios and each child's peak RSS. Rows that come from
the fake model server's timestamps (spawn → first request, last reply → exit, the gap between a reply
and the next request) are measured in the same runs. The table is printed and written into
BENCHMARKS.md between the bench markers (text outside them is kept).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import shlex
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
OURS, NEW, OLD = "pi", "pi16", "pi073"
METRIC_LABELS = {"first": "↳ spawn → first model request", "exit": "↳ last model response → process exit",
                 "gap": "↳ **harness time per turn** (reply → next request, median)",
                 "drift": "↳ per-turn drift: turns 291-300 minus turns 6-15 (median gap)",
                 "cost": "↳ **their cost per turn**: gap minus the same loop's without plugins (paired runs)",
                 "ui": "↳ spawn → the whole UI drawn (the footer naming the model)",
                 "per_unit": "↳ time per streamed delta (wall minus a one-word answer's, paired runs)",
                 "per_unit_cpu": "↳ CPU per streamed delta (CPU minus a one-word answer's, paired runs)"}


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

    def metric(self, label: str, name: str) -> float | None:
        values = [s.metrics[name] for s in self.ok(label) if name in s.metrics]
        return statistics.median(values) if values else None

    def problem(self, label: str) -> str:
        bad = [s.problem for s in self.samples.get(label, []) if not s.ok]
        return bad[0] if bad else ""


def run_scenario(scenario: Scenario, ws: Workspace, harnesses: list[Harness], runs: int) -> Outcome:
    chosen = [h for h in harnesses if h.kind in scenario.harnesses]
    steps = {h.label: scenario.build(ws, h) for h in chosen}
    outcome = Outcome({h.label: [] for h in chosen})
    total = min(runs, scenario.max_runs or runs)
    for i in range(-1 if scenario.warmup else 0, total):
        shift = i % len(chosen) if chosen else 0
        order = chosen[shift:] + chosen[:shift]  # each harness goes first in turn
        for h in order:
            sample = _paired_run(ws, steps[h.label], i)
            if i >= 0:
                outcome.samples[h.label].append(sample)
            _progress(scenario, h, i, sample)
    return outcome


def _paired_run(ws: Workspace, step: Step, index: int) -> Sample:
    """One run of ``step``; with a baseline, that one too (first on odd rounds) and the gap difference."""
    if step.baseline is None:
        return _one_run(ws, step)
    if index % 2:
        base, sample = _one_run(ws, step.baseline), _one_run(ws, step)
    else:
        sample, base = _one_run(ws, step), _one_run(ws, step.baseline)
    if not base.ok and sample.ok:
        sample.ok, sample.problem = False, f"the run without plugins failed: {base.problem}"
    if "gap" in sample.metrics and "gap" in base.metrics:
        sample.metrics["cost"] = sample.metrics["gap"] - base.metrics["gap"]
    if step.units and sample.ok and base.ok:
        sample.metrics["per_unit"] = (sample.seconds - base.seconds) / step.units
        if sample.cpu_seconds is not None and base.cpu_seconds is not None:
            sample.metrics["per_unit_cpu"] = (sample.cpu_seconds - base.cpu_seconds) / step.units
    return sample


def _one_run(ws: Workspace, step: Step) -> Sample:
    if step.before is not None:
        step.before()
    ws.server.requests.clear()
    ws.server.add(*step.replies)
    sample = (step.probe or measure)(step.child)
    left = ws.server.pending
    if left:
        with ws.server._lock:
            ws.server._queue.clear()
        if sample.ok:
            sample.ok, sample.problem = False, f"{left} scripted replies were never requested"
    needles = (step.last_request_has,) if isinstance(step.last_request_has, str) else step.last_request_has or ()
    last = ws.server.requests[-1].body if ws.server.requests else None
    missing = [needle for needle in needles if needle not in request_text(last)]
    if sample.ok and missing:
        seen = request_text((last.get("messages") or [None])[-1]) if isinstance(last, dict) else "no request"
        sample.ok, sample.problem = False, (f"the last model request lacks {missing[0]!r}; "
                                            f"its last message: {seen[:240]}")
    if sample.ok:
        sample.metrics = {**sample.metrics, **server_metrics(ws, sample)}
    ws.server.requests.clear()
    return sample


def server_metrics(ws: Workspace, sample: Sample) -> dict[str, float]:
    """Timings the fake server saw during one run (one clock: both live in this process)."""
    requests = list(ws.server.requests)
    out: dict[str, float] = {}
    if not requests:
        return out
    out["first"] = requests[0].arrived - sample.started
    if requests[-1].finished is not None:
        out["exit"] = sample.ended - requests[-1].finished
    gaps = [b.arrived - a.finished for a, b in itertools.pairwise(requests) if a.finished is not None]
    if gaps:
        out["gap"] = statistics.median(gaps)
    if len(gaps) >= 100:
        out["drift"] = statistics.median(gaps[-10:]) - statistics.median(gaps[5:15])
        body = requests[-1].body
        started = time.perf_counter()
        json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
        out["serialise"] = time.perf_counter() - started  # what the last request's JSON costs to write
    return out


def _progress(scenario: Scenario, h: Harness, i: int, sample: Sample) -> None:
    run = "warm-up" if i < 0 else f"run {i + 1}"
    peak = f"{sample.peak_kib / MIB:7.1f} MiB" if sample.peak_kib else "      ? MiB"
    peak += f"  cpu {sample.cpu_seconds:7.3f} s" if sample.cpu_seconds is not None else ""
    extra = "".join(f"  {k} {v * 1000:.1f} ms" for k, v in sample.metrics.items())
    status = "" if sample.ok else f"  FAILED: {sample.problem}"
    print(f"  {scenario.key:<15} {h.label:<5} {run:<8} {sample.seconds:8.3f} s {peak}{extra}{status}", flush=True)


# --- the table ----------------------------------------------------------------------------------------


def _fmt_s(value: float | None) -> str:
    if value is None:
        return "—"
    if abs(value) < 0.001:
        return f"{value * 1e6:.0f} µs"
    return f"{value * 1000:.1f} ms" if abs(value) < 0.1 else f"{value:.2f} s"


def _fmt_mib(value: float | None) -> str:
    return "—" if value is None else f"{value:.0f}"


def _ratio(ours: float | None, theirs: float | None) -> str:
    return f"{ours / theirs:.2f}" if ours is not None and theirs else "—"


Check = tuple[str, bool | None]


def _judge(text: str, ok: bool | None) -> Check:
    return text, ok


def targets(key: str, outcome: Outcome) -> dict[str, Check]:
    """Issue 19's targets for one scenario: row name ("wall", "exit", "gap", "drift", "rss") -> check."""
    mine, new = outcome.seconds(OURS), outcome.seconds(NEW)
    out: dict[str, Check] = {}
    if key in ("version", "help"):
        out["wall"] = _judge("≤ 60 ms", None if mine is None else mine <= 0.060)
    if key.startswith("interactive-"):
        out["wall"] = _judge("≤ 150 ms", None if mine is None else mine <= 0.150)
    if key.startswith("print-"):
        out["wall"] = _judge("≤ 0.6× Pi 1.6.0", None if mine is None or not new else mine / new <= 0.6)
        exit_s = outcome.metric(OURS, "exit")
        out["exit"] = _judge("≤ 30 ms", None if exit_s is None else exit_s <= 0.030)
        peak, peak_new = outcome.peak_mib(OURS), outcome.peak_mib(NEW)
        out["rss"] = _judge("peak RSS ≤ 0.5× Pi 1.6.0",
                            None if peak is None or not peak_new else peak / peak_new <= 0.5)
    if key.startswith(("loop-", "drift-")):
        gap, gap_new = outcome.metric(OURS, "gap"), outcome.metric(NEW, "gap")
        met = None if gap is None else gap <= 0.005 and (gap_new is None or gap <= 0.5 * gap_new)
        out["gap"] = _judge("≤ 5 ms and ≤ 0.5× Pi 1.6.0", met)
    if key == "plugins-noop":
        cost = outcome.metric(OURS, "cost")
        out["cost"] = _judge("≤ 1 ms", None if cost is None else cost <= 0.001)
    if key.startswith("drift-"):
        drift, serialise = outcome.metric(OURS, "drift"), outcome.metric(OURS, "serialise")
        allowance = max(0.001, 2 * (serialise or 0.0))
        out["drift"] = _judge(f"flat: ≤ {allowance * 1000:.1f} ms (2× writing the request JSON, min 1 ms)",
                              None if drift is None else drift <= allowance)
    if key.startswith(("bash-", "read-")):
        peak = outcome.peak_mib(OURS)
        out["rss"] = _judge("peak RSS < 100 MiB, flat", None if peak is None else peak < 100)
    return out


def table(results: dict[str, Outcome], labels: list[str]) -> str:
    titles = {OURS: "pi", NEW: "Pi 1.6.0", OLD: "Pi 0.73.1"}
    shown = [label for label in (OURS, NEW, OLD) if label in labels]
    head = ("| scenario | " + " | ".join(titles[x] for x in shown) + " | pi/Pi 1.6.0 | pi CPU | Pi 1.6.0 CPU | "
            + " | ".join(f"{titles[x]} MiB" for x in shown) + " | target | met |")
    rows = [head, "|---|" + "---:|" * (2 * len(shown) + 3) + "---|---|"]
    by_key = {s.key: s for s in SCENARIOS}
    for key, outcome in results.items():
        scenario, checks = by_key[key], targets(key, outcome)
        wall = [outcome.seconds(x) if outcome.seconds(x) is not None or not outcome.problem(x) else None
                for x in shown]
        cells = [_fmt_s(v) if v is not None or not outcome.problem(x) else "failed" for v, x in zip(wall, shown)]
        cells += [_ratio(outcome.seconds(OURS), outcome.seconds(NEW)), _fmt_s(outcome.cpu(OURS)),
                  _fmt_s(outcome.cpu(NEW))]
        cells += [_fmt_mib(outcome.peak_mib(x)) for x in shown]
        check = checks.get("wall") or checks.get("rss")
        rows.append(f"| {scenario.label} | " + " | ".join(cells) + " | " + _check_cells(check) + " |")
        if "wall" in checks and "rss" in checks:
            rows.append(_metric_row("↳ peak RSS", [outcome.peak_mib(x) for x in shown], len(shown), checks["rss"],
                                    mib=True))
        for name in scenario.metrics:
            values = [outcome.metric(x, name) for x in shown]
            rows.append(_metric_row(METRIC_LABELS[name], values, len(shown), checks.get(name)))
    return "\n".join(rows)


def _metric_row(label: str, values: list[float | None], count: int, check: Check | None, mib: bool = False) -> str:
    fmt = _fmt_mib if mib else _fmt_s
    ratio = _ratio(values[0], values[1]) if count > 1 else "—"
    blanks = " | ".join([""] * (2 + count))
    return f"| {label} | " + " | ".join(fmt(v) for v in values) + f" | {ratio} | {blanks} | {_check_cells(check)} |"


def _check_cells(check: Check | None) -> str:
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


def machine(node_argv: list[str] | None) -> str:
    node = node_argv[0] if node_argv else shutil.which("node")
    node_version = subprocess.run([node, "--version"], capture_output=True, text=True,
                                  check=False).stdout.strip() if node else "?"
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    return (f"{platform.machine()}, {os.cpu_count()} CPUs, Linux {platform.release()}, Python "
            f"{platform.python_version()}, Node {node_version} (Pi 1.6.0); load average at the end {load}")


def write_markdown(path: Path, body: str) -> None:
    old = path.read_text() if path.exists() else ""
    if BEGIN in old and END in old:
        before, rest = old.split(BEGIN, 1)
        after = rest.split(END, 1)[1]
    else:
        before, after = "# Benchmarks\n\n", "\n" + old
    path.write_text(f"{before}{BEGIN}\n{body}\n{END}{after}")


PLACEHOLDERS = {"--pi": "PI", "--pi16": '"$PI16"', "--node-pi": '"$PI073"', "--scratch": "DIR", "--out": "FILE"}


def shown_command(argv: list[str]) -> str:
    """The command line for the table header, with this machine's paths replaced by placeholders."""
    out: list[str] = []
    items = iter(argv)
    for item in items:
        name = item.split("=", 1)[0]
        if name in PLACEHOLDERS:
            if "=" not in item:
                next(items, None)
            out += [name, PLACEHOLDERS[name]]
        else:
            out.append(shlex.quote(item))
    return " ".join(out)


def _selected(key: str, names: list[str]) -> bool:
    """``key`` is named, or belongs to a named family (``interactive`` is every ``interactive-*`` row)."""
    return any(key == name or key.startswith(name + "-") for name in names)


def _command(value: str | None) -> list[str] | None:
    """A harness command: a path, or a quoted command line (``"node22 …/cli.js"``)."""
    return shlex.split(value) if value else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--pi", help="our pi (default: the pi script beside this Python)")
    parser.add_argument("--pi16", help="Pi 1.6.0's command (its Node 22 and dist/bundle/cli.js, quoted)")
    parser.add_argument("--node-pi", help="Pi 0.73.1's executable (node_modules/.bin/pi)")
    parser.add_argument("--runs", type=int, default=5, help="timed runs per scenario and harness (default 5)")
    parser.add_argument("--only", help="comma-separated scenario keys")
    parser.add_argument("--skip", help="comma-separated scenario keys to leave out")
    parser.add_argument("--out", default=str(REPO / "BENCHMARKS.md"), help="Markdown file to update")
    parser.add_argument("--no-write", action="store_true", help="print only")
    parser.add_argument("--scratch", help="directory for generated inputs (kept; default: a temp dir)")
    args = parser.parse_args(argv)

    keys = [s.key for s in SCENARIOS]
    wanted = args.only.split(",") if args.only else keys
    skipped = args.skip.split(",") if args.skip else []
    unknown = [k for k in [*wanted, *skipped] if not any(_selected(x, [k]) for x in keys)]
    if unknown:
        parser.error(f"unknown scenario(s) {unknown}; known: {', '.join(keys)}")
    chosen = [s for s in SCENARIOS if _selected(s.key, wanted) and not _selected(s.key, skipped)]

    scratch = Path(args.scratch) if args.scratch else Path(tempfile.mkdtemp(prefix="pi-bench-"))
    harnesses = [Harness(OURS, find_pi(args.pi), "python", scratch / OURS, "pi")]
    pi16, pi073 = _command(args.pi16), _command(args.node_pi)
    if pi16:
        harnesses.append(Harness(NEW, pi16, "node", scratch / NEW, "Pi 1.6.0"))
    if pi073:
        harnesses.append(Harness(OLD, pi073, "node", scratch / OLD, "Pi 0.73.1"))
    started = time.time()
    results: dict[str, Outcome] = {}
    try:
        with FakeModelServer(keep_alive=True) as server:
            ws = Workspace(scratch, server)
            for scenario in chosen:
                print(f"{scenario.key}: {scenario.label}", flush=True)
                results[scenario.key] = run_scenario(scenario, ws, harnesses, args.runs)
    finally:
        if not args.scratch:
            shutil.rmtree(scratch, ignore_errors=True)
    command = "python -m bench " + shown_command(argv if argv is not None else sys.argv[1:])
    body = "\n".join([
        (f"Produced by `{command.strip()}` (from the repo root, with the project venv's Python) on "
         f"{time.strftime('%Y-%m-%d %H:%M', time.localtime(started))}, taking {(time.time() - started) / 60:.0f} min."),
        f"Machine: {machine(pi16)}.",
        (f"Medians of {args.runs} runs per harness (at most 3 for the 50/200 MB size rows, 2 for the 1 GB and "
        "300-turn rows, which partly skip the warm-up), the harnesses taking turns going first, after one "
        "untimed warm-up each. Wall = the child's elapsed time; CPU = its user + system time; peak RSS = its "
        "`/usr/bin/time -f %M` (includes waited-for descendants such as the shell or rg). The fake model "
        "server runs in the bench process: CPU and peak RSS exclude serving, wall includes waiting for it. "
        "↳ rows come from the server's clock in the same runs. All columns of one table come from one "
        "run on a shared 2-CPU machine: compare columns, not tables."),
        "", table(results, [h.label for h in harnesses]), "", *failures(results)])
    print("\n" + body)
    if not args.no_write:
        write_markdown(Path(args.out), body)
        print(f"\nwrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
