"""The scheduler of a ``pi batch`` run: hands tasks to an executor, retries attempts whose worker died, writes
each result as it ends, and turns Ctrl-C or SIGTERM into an orderly cancel of everything running."""

from __future__ import annotations

import os
import secrets
import signal
import sys
import time
from collections import deque
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import FrameType
from typing import Any, Self

from pi_plugins.batch.display import (
    Display,
    LiveDisplay,
    LogDisplay,
    Tally,
    summary_table,
)
from pi_plugins.batch.executors import Ended, Executor, LocalExecutor
from pi_plugins.batch.results import Finished, ResultsFile
from pi_plugins.batch.runner import RunSettings
from pi_plugins.batch.scratch import RunScratch
from pi_plugins.batch.tasks import TaskError, TaskSpec, load_tasks

from pi_core.errors import PiError

DEFAULT_RETRIES = 2  # a task whose worker dies runs at most 1 + retries times
_POLL_S = 0.1


@dataclass
class BatchOptions:
    tasks: Path
    out: Path
    pi_options: tuple[str, ...] = ()
    executor: str = "local"
    jobs: int | None = None
    retries: int = DEFAULT_RETRIES
    resume: bool = False
    timeout_s: float | None = None
    max_turns: int | None = None
    workdir: Path | None = None
    ray_address: str | None = None
    task_cpus: float = 1.0
    task_memory_mb: int | None = None
    task_resources: dict[str, float] = field(default_factory=dict)
    live: bool | None = None  # None: a live display when stderr is a terminal


class _Stop:
    """Ctrl-C / SIGTERM while the run goes: the first cancels the running tasks, a second stops waiting."""

    def __init__(self) -> None:
        self.signum: int | None = None
        self.hurry = False
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> Self:
        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            self._previous[signum] = signal.signal(signum, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        for signum, previous in self._previous.items():
            signal.signal(signum, previous)

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.signum is not None:
            self.hurry = True
        else:
            self.signum = signum

    @property
    def exit_code(self) -> int:
        return 128 + self.signum if self.signum is not None else 0


def run_batch(options: BatchOptions) -> int:
    """Run every task of ``options.tasks``; the exit code is 0 when all ended ok, 1 when any did not
    (or a line was malformed), 128+signal when the run was cancelled."""
    try:
        task_file = load_tasks(options.tasks)
    except TaskError as err:
        raise PiError(str(err)) from err
    results = ResultsFile(options.out, resume=options.resume)
    try:
        return _Run(options, task_file.tasks, len(task_file.problems), results,
                    [str(p) for p in task_file.problems]).go()
    finally:
        results.close()


class _Run:
    def __init__(self, options: BatchOptions, tasks: list[TaskSpec], bad_lines: int, results: ResultsFile,
                 problems: list[str]) -> None:
        self.options, self.results, self.bad_lines, self.problems = options, results, bad_lines, problems
        self.tasks = [replace(t, timeout_s=t.timeout_s or options.timeout_s, max_turns=t.max_turns or options.max_turns)
                      for t in tasks if t.id not in results.previous]
        self.skipped = len(tasks) - len(self.tasks)
        self.run_id = f"{time.strftime('%Y%m%dT%H%M%S')}-{secrets.token_hex(4)}"
        out = options.out.resolve()
        self.settings = RunSettings(run_id=self.run_id, pi_options=options.pi_options,
                                    workdir=str((options.workdir or out / "workspaces").resolve()))
        self.sessions = out / "sessions"
        self.tally = Tally(total=len(tasks), skipped=self.skipped)

    def go(self) -> int:
        scratch = RunScratch(Path(self.settings.workdir), self.run_id)
        try:
            swept = scratch.claim()
        except OSError:  # a --workdir that only the cluster's nodes have: nothing of ours to sweep here
            swept = 0
        started = time.monotonic()
        try:
            executor = self._executor()
        except BaseException:
            scratch.release()
            raise
        title = (f"pi batch  {self.options.tasks.name} → {self.options.out}  "
                 f"{executor.name} ×{executor.slots}")
        live = self.options.live if self.options.live is not None else sys.stderr.isatty()
        display: Display = LiveDisplay(self.tally, title) if live else LogDisplay(self.tally, title)
        stop = _Stop()
        try:
            with stop, display:
                for problem in self.problems:
                    display.note(f"skipped {problem}")
                if self.skipped:
                    display.note(f"--resume: {self.skipped} task(s) already have a result")
                if swept:
                    display.note(f"removed {swept} unfinished session folder(s) that a killed run left in "
                                 f"{scratch.root}")
                if executor.startup_note:
                    display.note(executor.startup_note)
                self._loop(executor, display, stop)
        finally:
            executor.close()
            self._sweep()
            scratch.release()
        wall = time.monotonic() - started
        from rich.console import Console

        Console(file=sys.stdout, soft_wrap=False).print(
            summary_table(self.tally, wall, self.bad_lines, startup_s=executor.startup_s))
        if stop.signum is not None:
            return stop.exit_code
        failed = any(f.outcome.status != "ok" for f in self.tally.finished)
        return 1 if failed or self.bad_lines else 0

    def _executor(self) -> Executor:
        options = self.options
        if options.executor == "ray":
            from pi_plugins.batch.ray_executor import RayExecutor

            return RayExecutor(self.settings, jobs=options.jobs, report=self.tally.progress,
                               address=options.ray_address, task_cpus=options.task_cpus,
                               task_memory_mb=options.task_memory_mb, resources=options.task_resources)
        return LocalExecutor(self.settings, options.jobs or os.cpu_count() or 1, self.tally.progress)

    def _loop(self, executor: Executor, display: Display, stop: _Stop) -> None:
        queue: deque[tuple[TaskSpec, int]] = deque((task, 1) for task in self.tasks)
        running: dict[str, TaskSpec] = {}
        busy_dirs: set[str] = set()  # never two tasks in one directory at once
        cancelled = False
        cancel_at = 0.0
        while queue or running:
            if stop.signum is not None and not cancelled:
                cancelled, cancel_at = True, time.monotonic()
                display.note(f"{signal.Signals(stop.signum).name}: cancelling {len(running)} running task(s)…")
                executor.cancel()
                queue.clear()
            if cancelled and (stop.hurry or time.monotonic() - cancel_at > 30):
                break  # the sweep below still kills whatever is left
            while not cancelled and queue and len(running) < executor.slots:
                task, attempt = self._next(queue, busy_dirs)
                if task is None:
                    break
                running[task.id] = task
                if task.cwd is not None:
                    busy_dirs.add(task.cwd)
                self.tally.start(task, attempt)
                executor.submit(task, attempt)
            for ended in executor.ended(_POLL_S):
                running.pop(ended.task.id, None)
                if ended.task.cwd is not None:
                    busy_dirs.discard(ended.task.cwd)
                self._ended(ended, queue, display, cancelled)

    @staticmethod
    def _next(queue: deque[tuple[TaskSpec, int]], busy_dirs: set[str]) -> tuple[Any, int]:
        for index, (task, attempt) in enumerate(queue):
            if task.cwd is None or task.cwd not in busy_dirs:
                del queue[index]
                return task, attempt
        return None, 0

    def _ended(self, ended: Ended, queue: deque[tuple[TaskSpec, int]], display: Display, cancelled: bool) -> None:
        task, attempt, outcome = ended.task, ended.attempt, ended.outcome
        if outcome.lost and not cancelled and attempt <= self.options.retries:
            display.note(f"retrying {task.id} (attempt {attempt + 1} of {self.options.retries + 1}): {outcome.error}")
            self.tally.retry(task)
            queue.appendleft((task, attempt + 1))
            return
        if outcome.lost and cancelled:  # the cancel took the worker down with the task
            outcome.status, outcome.error = "cancelled", "cancelled before the task finished"
        elif outcome.lost:
            outcome.error = f"{outcome.error} (gave up after {attempt} attempts)"
        session = None
        if outcome.session_jsonl is not None:
            self.sessions.mkdir(parents=True, exist_ok=True)
            path = self.sessions / f"{task.slug}.jsonl"
            path.write_text(outcome.session_jsonl, encoding="utf-8")
            session = str(path.relative_to(self.options.out.resolve()))
        now = time.time()
        finished = Finished(task, outcome, attempt, now - outcome.duration_s, now, session)
        self.results.write(finished)
        self.tally.finish(finished)
        display.finished(finished)

    def _sweep(self) -> None:
        """Whatever of this run still lives on this machine (a daemon a tool started) dies with the run."""
        from pi_plugins.batch.reaper import RUN_MARKER, kill_marked

        kill_marked(RUN_MARKER, self.run_id)
