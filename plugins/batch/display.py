"""What a batch run shows: a live progress display on a terminal (plain lines otherwise), and the summary table."""

from __future__ import annotations

import sys
import threading
import time
from dataclasses import dataclass, field
from typing import IO, Any, Self

from pi_plugins.batch.results import Finished
from pi_plugins.batch.runner import Progress
from pi_plugins.batch.tasks import TaskSpec

STATUS_STYLE = {"ok": "green", "error": "red", "timeout": "yellow", "cancelled": "magenta"}
MAX_ROWS = 60  # a longer summary shows only the tasks that did not end ok


@dataclass
class _Running:
    task: TaskSpec
    attempt: int
    since: float
    turns: int = 0
    tokens: int = 0
    cost: float = 0.0


@dataclass
class Tally:
    """The run's counters; every method may be called from any thread."""

    total: int = 0
    skipped: int = 0
    done: int = 0
    failed: int = 0
    tokens: int = 0
    cost: float = 0.0
    started: float = field(default_factory=time.monotonic)
    running: dict[str, _Running] = field(default_factory=dict)
    finished: list[Finished] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def start(self, task: TaskSpec, attempt: int) -> None:
        with self.lock:
            self.running[task.id] = _Running(task, attempt, time.monotonic())

    def progress(self, item: Progress) -> None:
        with self.lock:
            running = self.running.get(item.task_id)
            if running is not None and running.attempt == item.attempt:
                running.turns, running.tokens, running.cost = item.turns, item.tokens, item.cost

    def finish(self, finished: Finished) -> None:
        with self.lock:
            self.running.pop(finished.task.id, None)
            self.finished.append(finished)
            self.done += 1
            self.failed += finished.outcome.status in ("error", "timeout")
            self.tokens += finished.outcome.usage.tokens
            self.cost += finished.outcome.usage.cost

    def retry(self, task: TaskSpec) -> None:
        with self.lock:
            self.running.pop(task.id, None)

    def live_totals(self) -> tuple[int, float]:
        with self.lock:
            return (self.tokens + sum(r.tokens for r in self.running.values()),
                    self.cost + sum(r.cost for r in self.running.values()))


def tokens_text(count: int) -> str:
    if count < 1000:
        return str(count)
    if count < 1_000_000:
        return f"{count / 1000:.1f}k"
    return f"{count / 1_000_000:.2f}M"


def clock(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


class LiveDisplay:
    """A rich Live panel on a terminal: a bar, the counters, and the tasks running now."""

    def __init__(self, tally: Tally, title: str, stream: IO[str] | None = None) -> None:
        from rich.console import Console
        from rich.live import Live

        self.tally, self.title = tally, title
        self.console = Console(file=stream or sys.stderr)
        self._live = Live(get_renderable=self._render, console=self.console, refresh_per_second=4, transient=False)

    def __enter__(self) -> Self:
        self._live.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._live.stop()

    def note(self, text: str) -> None:
        self.console.print(text, markup=False, highlight=False)

    def finished(self, finished: Finished) -> None:
        if finished.outcome.status != "ok":
            o = finished.outcome
            self.console.print(f"[{STATUS_STYLE[o.status]}]{o.status:<9}[/] {finished.task.id}: {o.error or ''}",
                               highlight=False)

    def _render(self) -> Any:
        from rich.console import Group
        from rich.progress_bar import ProgressBar
        from rich.table import Table
        from rich.text import Text

        t = self.tally
        tokens, cost = t.live_totals()
        with t.lock:
            running = sorted(t.running.values(), key=lambda r: r.since)
            done, failed, total, skipped = t.done, t.failed, t.total, t.skipped
        todo = total - skipped
        queued = max(0, todo - done - len(running))
        elapsed = time.monotonic() - t.started
        title = Text(self.title, style="bold", no_wrap=True, overflow="ellipsis")
        head = Table.grid(padding=(0, 1))
        head.add_row(ProgressBar(total=max(todo, 1), completed=done, width=40), Text(f"{done}/{todo}"),
                     Text(clock(elapsed), style="dim"))
        counts = Text()
        counts.append(f"done {done}", style="green")
        counts.append("  ")
        counts.append(f"running {len(running)}", style="cyan")
        counts.append("  ")
        counts.append(f"failed {failed}", style="red" if failed else "dim")
        counts.append(f"  queued {queued}")
        if skipped:
            counts.append(f"  skipped {skipped}", style="dim")
        counts.append(f"  tokens {tokens_text(tokens)}  cost ${cost:.4f}")
        rows = Table(box=None, show_header=False, padding=(0, 1), pad_edge=False)
        now = time.monotonic()
        for item in running[:8]:
            retry = f" (attempt {item.attempt})" if item.attempt > 1 else ""
            rows.add_row(Text("▸", style="cyan"), Text(item.task.id + retry),
                         Text(f"turn {item.turns}", style="dim"), Text(tokens_text(item.tokens), style="dim"),
                         Text(clock(now - item.since), style="dim"))
        if len(running) > 8:
            rows.add_row("", Text(f"… {len(running) - 8} more running", style="dim"), "", "", "")
        return Group(title, head, counts, rows)


class LogDisplay:
    """Plain lines on stderr, one per finished task: for CI logs and pipes."""

    def __init__(self, tally: Tally, title: str, stream: IO[str] | None = None) -> None:
        self.tally, self.stream = tally, stream or sys.stderr
        self.note(title)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def note(self, text: str) -> None:
        self.stream.write(text + "\n")
        self.stream.flush()

    def finished(self, finished: Finished) -> None:
        t, o = self.tally, finished.outcome
        width = len(str(t.total - t.skipped))
        line = (f"[{t.done:>{width}}/{t.total - t.skipped}] {o.status:<9} {finished.task.id}  {o.turns} turns  "
                f"{tokens_text(o.usage.tokens)} tokens  ${o.usage.cost:.4f}  {o.duration_s:.1f}s")
        self.note(line + (f"  {o.error}" if o.error else ""))


Display = LiveDisplay | LogDisplay


def summary_table(tally: Tally, wall_s: float, bad_lines: int, *, startup_s: float = 0.0) -> Any:
    """The end-of-run table (rich): one row per task run now (only the failures when there are many).

    ``startup_s`` (starting or joining Ray) is shown apart, and the rate is over the time after it."""
    from rich.table import Table

    rows = sorted(tally.finished, key=lambda f: f.task.line)
    shown = rows if len(rows) <= MAX_ROWS else [f for f in rows if f.outcome.status != "ok"]
    by_status = {s: sum(1 for f in rows if f.outcome.status == s) for s in STATUS_STYLE}
    task_s = max(wall_s - startup_s, 0.0)
    rate = len(rows) / task_s * 60 if task_s > 0 else 0.0
    parts = [f"{n} {s}" for s, n in by_status.items() if n]
    timing = (f"{clock(wall_s)}: start-up {startup_s:.1f}s, tasks {task_s:.1f}s · {rate:.1f} tasks/min after start-up"
              if startup_s >= 0.05 else f"{clock(wall_s)} · {rate:.1f} tasks/min")
    caption = (f"{len(rows)} task(s): {', '.join(parts) or 'none run'}"
               + (f"; {tally.skipped} skipped (already done)" if tally.skipped else "")
               + (f"; {bad_lines} malformed line(s) skipped" if bad_lines else "")
               + f" · {tokens_text(tally.tokens)} tokens · ${tally.cost:.4f} · {timing}")
    from rich import box

    table = Table(title="pi batch", caption=caption, caption_justify="left", box=box.SIMPLE_HEAD)
    id_width = min(20, max((len(f.task.id) for f in shown), default=2))
    for name, width in (("id", id_width), ("status", 9), ("turns", 5), ("tokens", 6), ("cost", 7), ("time", 6),
                        ("note", 10)):
        table.add_column(name, justify="right" if name in ("turns", "tokens", "cost", "time") else "left",
                         overflow="ellipsis", no_wrap=True, min_width=width, max_width=40 if name == "note" else None)
    for item in shown:
        o = item.outcome
        note = o.error or (o.answer or "").strip().replace("\n", " ")
        if item.attempts > 1:
            note = f"(attempts: {item.attempts}) {note}"
        table.add_row(item.task.id, f"[{STATUS_STYLE[o.status]}]{o.status}[/]", str(o.turns),
                      tokens_text(o.usage.tokens), f"${o.usage.cost:.4f}", f"{o.duration_s:.1f}s", note)
    if len(shown) < len(rows):
        table.add_row("…", "", "", "", "", "", f"{len(rows) - len(shown)} ok task(s) not shown: see results.jsonl")
    return table
