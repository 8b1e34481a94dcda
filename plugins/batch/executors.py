"""Where attempts run: ``LocalExecutor`` (a thread per running task on this machine, each driving its own pi
process) and, in ray_executor.py, ``RayExecutor``. The scheduler in run.py talks to either through
``Executor``: submit an attempt, collect the ones that ended, cancel everything."""

from __future__ import annotations

import queue
import threading
from dataclasses import dataclass
from typing import Protocol

from pi_plugins.batch.runner import Outcome, Report, RunSettings, run_task
from pi_plugins.batch.tasks import TaskSpec


@dataclass(frozen=True)
class Ended:
    task: TaskSpec
    attempt: int
    outcome: Outcome


class Executor(Protocol):
    name: str
    slots: int  # how many attempts may run at once
    startup_s: float  # what getting ready to run tasks took (Ray: starting or joining an instance)
    startup_note: str | None  # said once the executor is ready

    def submit(self, task: TaskSpec, attempt: int) -> None: ...

    def ended(self, timeout: float) -> list[Ended]:
        """Attempts that ended since the last call, waiting up to ``timeout`` seconds for the first."""
        ...

    def cancel(self) -> None:
        """Stop every running attempt (each still reports an ``Ended``, status ``cancelled``)."""
        ...

    def close(self) -> None: ...


class LocalExecutor:
    name = "local"
    startup_s: float = 0.0
    startup_note: str | None = None

    def __init__(self, settings: RunSettings, jobs: int, report: Report) -> None:
        self.settings, self.slots, self.report = settings, jobs, report
        self._cancel = threading.Event()
        self._done: queue.Queue[Ended] = queue.Queue()
        self._threads: list[threading.Thread] = []

    def submit(self, task: TaskSpec, attempt: int) -> None:
        thread = threading.Thread(target=self._run, args=(task, attempt), name=f"pi-batch-{task.slug[:30]}",
                                  daemon=True)
        self._threads = [t for t in self._threads if t.is_alive()] + [thread]
        thread.start()

    def _run(self, task: TaskSpec, attempt: int) -> None:
        try:
            outcome = run_task(task, self.settings, attempt, cancel=self._cancel, report=self.report)
        except Exception as err:  # noqa: BLE001 - a bug in the runner is this task's error, not the run's end
            outcome = Outcome("error", error=f"the batch runner failed: {type(err).__name__}: {err}")
        self._done.put(Ended(task, attempt, outcome))

    def ended(self, timeout: float) -> list[Ended]:
        out: list[Ended] = []
        try:
            out.append(self._done.get(timeout=timeout))
            while True:
                out.append(self._done.get_nowait())
        except queue.Empty:
            return out

    def cancel(self) -> None:
        self._cancel.set()

    def close(self) -> None:
        for thread in self._threads:
            thread.join(15)
