"""Where each attempt's pi writes its session while it runs: ``WORKDIR/.pi-batch-sessions/<run>/<task>.<attempt>``.

The folder lives beside the working copies (under ``--out`` unless ``--workdir`` moves them), never in the
temp directory: a batch killed with SIGKILL used to leave ``pi-batch-*`` folders there. The session comes
back with the attempt's result and its folder is removed; what a killed run left is removed by the next
run over the same working directory, which says so. The run holding ``<run>.lock`` is still going: its
folder is left alone.
"""

from __future__ import annotations

import fcntl
import shutil
from pathlib import Path
from typing import IO

SESSIONS = ".pi-batch-sessions"  # a slug never starts with "." (tasks.py), so no task's copy is named so


def attempt_dir(workdir: Path, run_id: str, slug: str, attempt: int) -> Path:
    """A fresh, empty folder for one attempt's session."""
    path = workdir / SESSIONS / run_id / f"{slug}.{attempt}"
    shutil.rmtree(path, ignore_errors=True)
    for _ in range(5):
        try:
            path.mkdir(parents=True)
            return path
        except FileNotFoundError:
            continue  # another attempt's remove_attempt_dir took the empty parent away just now
    path.mkdir(parents=True)
    return path


def remove_attempt_dir(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)
    for parent in (path.parent, path.parent.parent):  # the run's folder, then SESSIONS, once empty
        try:
            parent.rmdir()
        except OSError:
            return


class RunScratch:
    """The driver's claim on its run folder, and the sweep of folders that killed runs left."""

    def __init__(self, workdir: Path, run_id: str) -> None:
        self.root = workdir / SESSIONS
        self.run_id = run_id
        self._lock: IO[str] | None = None

    def claim(self) -> int:
        """Hold this run's lock and remove the folders of runs that hold none; returns how many went."""
        self.root.mkdir(parents=True, exist_ok=True)
        self._lock = self._try_lock(self.run_id)
        removed = 0
        for entry in sorted(self.root.iterdir()):
            if entry.name == self.run_id or entry.suffix == ".lock" or not entry.is_dir():
                continue
            lock = self._try_lock(entry.name)
            if lock is None:
                continue  # another run, still going
            shutil.rmtree(entry, ignore_errors=True)
            (self.root / f"{entry.name}.lock").unlink(missing_ok=True)
            lock.close()
            removed += 1
        return removed

    def release(self) -> None:
        if self._lock is None:
            return
        shutil.rmtree(self.root / self.run_id, ignore_errors=True)
        (self.root / f"{self.run_id}.lock").unlink(missing_ok=True)
        self._lock.close()
        self._lock = None
        try:
            self.root.rmdir()
        except OSError:
            pass  # another run's folder is still there

    def _try_lock(self, run_id: str) -> IO[str] | None:
        handle = (self.root / f"{run_id}.lock").open("a")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            return None
        return handle
