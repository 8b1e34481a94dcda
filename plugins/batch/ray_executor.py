"""``--executor ray``: each attempt is a Ray task that drives its own pi process on whichever node Ray picks.

Ray comes with the ``ray`` extra (``pip install 'pi-harness[ray]'``). Without an address ``ray.init`` joins
the instance ``ray start`` left running on this machine, else starts a private one that ends with the run
(about 5 s); ``--ray-address auto`` or ``ray://host:port`` names one. Tasks on an instance pi did not start
get the driver's ``*_API_KEY`` and ``PI_*`` variables (pi, its plugins and its config directory must be
installed on the nodes). Ray's own task retries are off: the scheduler retries a lost worker itself, with a
fresh working copy, and counts the attempts.

Cancelling goes through Ray: ``ray.cancel`` raises KeyboardInterrupt in the task, which kills its pi and
returns what the session did so far; a task that has not ended a few seconds later (stuck in a git clone,
say) is cancelled with ``force``, which kills its worker, and a reaper task on every node kills whatever of
the run is still alive there.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

from pi_plugins.batch.executors import Ended
from pi_plugins.batch.reaper import MARKER, RUN_MARKER
from pi_plugins.batch.runner import Outcome, Progress, Report, RunSettings, run_task
from pi_plugins.batch.tasks import TaskSpec

from pi_core.errors import PiError

_PROGRESS_EVERY_S = 0.5
_FORCE_AFTER_S = 4.0  # a cancelled task still running this long after ray.cancel() is cancelled with force
_REAP_WAIT_S = 30.0
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

    with _interruptible():
        return run_task(task, settings, attempt, report=report)


@contextmanager
def _interruptible() -> Iterator[None]:
    """Let ``ray.cancel`` reach the task. Ray interrupts a task as SIGINT would, which does nothing where
    SIGINT is ignored: in a worker of a Ray started from a background job (``pi batch ... &``, nohup, a
    service), so a cancelled task ran on to its end."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGINT)
    if previous in (signal.SIG_IGN, signal.SIG_DFL, None):
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        if signal.getsignal(signal.SIGINT) is not previous and previous is not None:
            signal.signal(signal.SIGINT, previous)


def reap(name: str, value: str, scratch: str | None = None) -> int:
    """A reaper task, run on one node: kill the processes marked ``name=value`` there (and remove the run's
    session folder). Returns how many it killed."""
    import shutil

    from pi_plugins.batch.reaper import kill_marked

    killed = len(kill_marked(name, value))
    if scratch is not None:
        shutil.rmtree(scratch, ignore_errors=True)
    return killed


class RayExecutor:
    name = "ray"

    def __init__(self, settings: RunSettings, *, jobs: int | None, report: Report, address: str | None,
                 task_cpus: float, task_memory_mb: int | None, resources: dict[str, float]) -> None:
        ray = import_ray()
        self.ray, self.settings, self.report = ray, settings, report
        began = time.monotonic()
        try:
            if not ray.is_initialized():
                ray.init(address=address, include_dashboard=False, log_to_driver=False,
                         logging_level=logging.WARNING, configure_logging=True)
        except Exception as err:
            raise PiError(f"could not connect to Ray{f' at {address}' if address else ''}: {err}") from err
        self.private = _started_here(ray)
        if not self.private:  # other processes, maybe other machines: they need this user's keys and settings
            passed = tuple((k, v) for k, v in os.environ.items()
                           if k.endswith("_API_KEY") or (k.startswith("PI_") and not k.startswith("PI_BATCH_")))
            self.settings = replace(settings, env=(*settings.env, *passed))
        options: dict[str, Any] = {"num_cpus": task_cpus, "max_retries": 0}
        if task_memory_mb:
            options["memory"] = task_memory_mb * 1024 * 1024
        if resources:
            options["resources"] = resources
        self._remote = ray.remote(remote_attempt).options(**options)
        self._reaper = ray.remote(num_cpus=0, max_retries=0)(reap)
        self._box = ray.remote(num_cpus=0)(ProgressBox).remote()
        cpus = float(ray.cluster_resources().get("CPU", 1))
        self.slots = jobs or max(1, int(cpus // task_cpus) if task_cpus > 0 else int(cpus))
        self.startup_s = time.monotonic() - began
        where = "started a private Ray instance" if self.private else f"joined the Ray cluster at {_address(ray, address)}"
        self.startup_note: str | None = f"ray: {where} in {self.startup_s:.1f}s ({cpus:g} CPUs)"
        self._running: dict[Any, tuple[TaskSpec, int]] = {}
        self._last: dict[str, Progress] = {}
        self._drained = 0.0
        self._cancelled_at: float | None = None
        self._forced = False
        self._reaps: list[Any] = []

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
        if self._cancelled_at is not None and not self._forced \
                and time.monotonic() - self._cancelled_at >= _FORCE_AFTER_S:
            self._force_cancel()
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
        if outcome.lost and self._cancelled_at is None:  # what the dead attempt started dies with it
            self._reap_everywhere(MARKER, f"{self.settings.run_id}/{task.slug}/{attempt}")
        return Ended(task, attempt, outcome)

    def _counters(self, task: TaskSpec, outcome: Outcome) -> Outcome:
        """Turns, tokens and cost as last reported, for an attempt whose worker never returned."""
        last = self._last.get(task.id)
        if last is not None:
            outcome.turns = last.turns
            outcome.usage.cost = last.cost
        return outcome

    def cancel(self) -> None:
        self._cancelled_at = time.monotonic()
        for ref in list(self._running):
            self.ray.cancel(ref)

    def _force_cancel(self) -> None:
        """The tasks that ignored the cancel: kill their workers, then whatever of the run lives on."""
        self._forced = True
        for ref in list(self._running):
            self.ray.cancel(ref, force=True)
        self._reap_everywhere(RUN_MARKER, self.settings.run_id)

    def _reap_everywhere(self, name: str, value: str, scratch: str | None = None) -> None:
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        try:
            for node in self.ray.nodes():
                if node.get("Alive"):
                    on_node = NodeAffinitySchedulingStrategy(node["NodeID"], soft=False)
                    self._reaps.append(self._reaper.options(scheduling_strategy=on_node).remote(name, value,
                                                                                              scratch))
        except Exception:  # noqa: BLE001 - the cluster is going away: its nodes' processes go with it
            return

    def close(self) -> None:
        if self._cancelled_at is not None:  # an interrupted task may have left its pi (or its git) behind
            from pi_plugins.batch.scratch import SESSIONS

            folder = os.path.join(self.settings.workdir, SESSIONS, self.settings.run_id)
            self._reap_everywhere(RUN_MARKER, self.settings.run_id, folder)
        if self._reaps:
            self.ray.wait(self._reaps, num_returns=len(self._reaps), timeout=_REAP_WAIT_S)
        self.ray.shutdown()


def _started_here(ray: Any) -> bool:
    """Whether ray.init started the instance (then it ends with the run) rather than joining one."""
    node = getattr(ray._private.worker, "_global_node", None)  # Ray has no public way to ask
    return bool(getattr(node, "head", False))


def _address(ray: Any, given: str | None) -> str:
    if given and given != "auto":
        return given
    try:
        return str(ray.get_runtime_context().gcs_address)
    except Exception:  # noqa: BLE001 - best effort: only shown
        return os.environ.get("RAY_ADDRESS") or "auto"


def _first_line(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return text[0] if text else type(err).__name__
