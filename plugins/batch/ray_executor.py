"""``--executor ray``: each attempt is a Ray task that drives its own pi process on whichever node Ray picks.

Ray comes with the ``ray`` extra (``pip install 'pi-harness[ray]'``). Without an address, ``ray.init``
starts a private local cluster that ends with the run; ``--ray-address auto`` or ``ray://host:port``
joins an existing one, and the tasks get the driver's ``*_API_KEY`` variables (pi, its plugins and its
config directory must be installed on the nodes). Ray's own task retries are off: the scheduler retries a lost worker itself, with
a fresh working copy, and counts the attempts.
"""

from __future__ import annotations

import logging
import os
import time
from dataclasses import replace
from typing import Any

from pi_plugins.batch.executors import Ended
from pi_plugins.batch.runner import Outcome, Progress, Report, RunSettings, run_task
from pi_plugins.batch.tasks import TaskSpec

from pi_core.errors import PiError

_PROGRESS_EVERY_S = 0.5
MISSING = "the ray executor needs Ray, which pi installs as an extra: pip install 'pi-harness[ray]'"


def import_ray() -> Any:
    try:
        import ray
    except ImportError as err:
        raise PiError(MISSING) from err
    return ray


class ProgressBox:
    """An actor the Ray tasks post their progress to; the driver drains it."""

    def __init__(self) -> None:
        self.items: list[Progress] = []

    def put(self, item: Progress) -> None:
        self.items.append(item)

    def drain(self) -> list[Progress]:
        items, self.items = self.items, []
        return items


def remote_attempt(task: TaskSpec, settings: RunSettings, attempt: int, box: Any) -> Outcome:
    """The body of one Ray task (module level, so workers import it instead of unpickling code)."""

    def report(progress: Progress) -> None:
        box.put.remote(progress)

    return run_task(task, settings, attempt, report=report)


class RayExecutor:
    name = "ray"

    def __init__(self, settings: RunSettings, *, jobs: int | None, report: Report, address: str | None,
                 task_cpus: float, task_memory_mb: int | None, resources: dict[str, float]) -> None:
        ray = import_ray()
        self.ray, self.settings, self.report = ray, settings, report
        self.owns_cluster = address is None and not ray.is_initialized()
        try:
            if not ray.is_initialized():
                ray.init(address=address, include_dashboard=False, log_to_driver=False,
                         logging_level=logging.WARNING, configure_logging=True)
        except Exception as err:
            raise PiError(f"could not connect to Ray{f' at {address}' if address else ''}: {err}") from err
        options: dict[str, Any] = {"num_cpus": task_cpus, "max_retries": 0}
        if task_memory_mb:
            options["memory"] = task_memory_mb * 1024 * 1024
        if resources:
            options["resources"] = resources
        if address is not None:  # other machines: the tasks need this user's provider keys there too
            keys = tuple((k, v) for k, v in os.environ.items() if k.endswith("_API_KEY"))
            self.settings = replace(settings, env=(*settings.env, *keys))
        self._remote = ray.remote(remote_attempt).options(**options)
        self._box = ray.remote(num_cpus=0)(ProgressBox).remote()
        cpus = float(ray.cluster_resources().get("CPU", 1))
        self.slots = jobs or max(1, int(cpus // task_cpus) if task_cpus > 0 else int(cpus))
        self._running: dict[Any, tuple[TaskSpec, int]] = {}
        self._last: dict[str, Progress] = {}
        self._drained = 0.0

    def submit(self, task: TaskSpec, attempt: int) -> None:
        ref = self._remote.remote(task, self.settings, attempt, self._box)
        self._running[ref] = (task, attempt)

    def _drain_progress(self, *, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._drained < _PROGRESS_EVERY_S:
            return  # each drain is a round trip to the actor: a few a second are enough for the display
        self._drained = now
        try:
            items = self.ray.get(self._box.drain.remote(), timeout=10)
        except Exception:  # noqa: BLE001 - progress is best effort; results come with the task
            return
        for item in items:
            self._last[item.task_id] = item
            self.report(item)

    def ended(self, timeout: float) -> list[Ended]:
        self._drain_progress()
        if not self._running:
            time.sleep(timeout)
            return []
        ready, _ = self.ray.wait(list(self._running), num_returns=len(self._running), timeout=timeout)
        out = [self._collect(ref) for ref in ready]
        if out:
            self._drain_progress(force=True)
        return out

    def _collect(self, ref: Any) -> Ended:
        task, attempt = self._running.pop(ref)
        exceptions = self.ray.exceptions
        try:
            outcome: Outcome = self.ray.get(ref)
        except exceptions.TaskCancelledError:
            outcome = self._counters(task, Outcome("cancelled", error="cancelled before the task finished"))
        except (exceptions.WorkerCrashedError, exceptions.NodeDiedError, exceptions.LocalRayletDiedError,
                exceptions.ObjectLostError, exceptions.OwnerDiedError, exceptions.OutOfMemoryError) as err:
            outcome = self._counters(task, Outcome("error", error=f"the Ray worker died: {_first_line(err)}",
                                                   lost=True))
        except exceptions.RayTaskError as err:
            outcome = Outcome("error", error=f"the batch runner failed on its Ray worker: {_first_line(err)}")
        except exceptions.RayError as err:
            outcome = self._counters(task, Outcome("error", error=f"Ray failed the task: {_first_line(err)}",
                                                   lost=True))
        return Ended(task, attempt, outcome)

    def _counters(self, task: TaskSpec, outcome: Outcome) -> Outcome:
        """Turns, tokens and cost as last reported, for an attempt whose worker never returned."""
        last = self._last.get(task.id)
        if last is not None:
            outcome.turns = last.turns
            outcome.usage.cost = last.cost
        return outcome

    def cancel(self) -> None:
        for ref in list(self._running):
            self.ray.cancel(ref)

    def close(self) -> None:
        if self.owns_cluster:
            self.ray.shutdown()


def _first_line(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return text[0] if text else type(err).__name__
