"""One temp directory per pi run, created on first use and removed when the process exits.

Pi leaves every ``pi-bash-*.log`` behind in the system temp dir; we keep them together so a single
``rmtree`` at exit clears them. ``atexit`` covers normal exits and ``sys.exit`` (the CLI turns
SIGTERM/SIGHUP into one); the CLI may also call ``cleanup_run_temp_dir()`` itself.
"""

from __future__ import annotations

import atexit
import os
import threading
from pathlib import Path

_lock = threading.Lock()
_run_dir: Path | None = None
_owner_pid: int | None = None


def run_temp_dir() -> Path:
    """The directory for this run's temp files (mode 0700), created on the first call."""
    import tempfile

    global _run_dir, _owner_pid
    with _lock:
        # A forked child must not share (or later delete) its parent's directory.
        if _run_dir is None or _owner_pid != os.getpid():
            _run_dir = Path(tempfile.mkdtemp(prefix="pi-run-"))
            _owner_pid = os.getpid()
            atexit.register(cleanup_run_temp_dir)
        return _run_dir


def new_temp_path(prefix: str, suffix: str = ".log") -> Path:
    """A fresh, not yet created path ``{prefix}-{16 hex}{suffix}`` inside the run directory."""
    import secrets

    return run_temp_dir() / f"{prefix}-{secrets.token_hex(8)}{suffix}"


def cleanup_run_temp_dir() -> None:
    """Delete the run directory and everything in it; safe to call more than once."""
    global _run_dir, _owner_pid
    with _lock:
        directory, owner = _run_dir, _owner_pid
        if directory is None or owner != os.getpid():
            return
        _run_dir = _owner_pid = None
    import shutil

    # At exit there is no one left to report a half-deleted temp dir to.
    shutil.rmtree(directory, ignore_errors=True)
