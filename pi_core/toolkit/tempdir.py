"""Temp files: one directory per pi run for scratch files, removed when the process exits; and the
full-output files of long commands, which outlive the run (the model and the user were given their path).

Full-output files go where the session keeps them (``<session>.outputs/``, see
``pi_core.sessions.outputs``), or, without a session file, into the system temp dir as Pi does, under an
unpredictable name; ``clean_old_temp_outputs`` removes those older than a day at start-up.
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


# Full-output files in the system temp dir: bash's and powershell's logs, and MCP results and resources
# (whose suffix is the resource's own, so the file opens in the right program): (name prefix, suffix).
FULL_OUTPUT_NAMES = (("pi-bash-", ".log"), ("pi-powershell-", ".log"), ("pi-mcp-", ""))
TEMP_OUTPUT_MAX_AGE_S = 24 * 3600


def new_output_file(prefix: str, directory: Path | None = None, suffix: str = ".log") -> tuple[int, Path]:
    """Create ``{prefix}-{random}{suffix}`` (mode 0600, never an existing file) in ``directory`` (made 0700
    if needed), or in the system temp dir when None; returns the open descriptor and the path."""
    import secrets
    import tempfile

    if directory is None:
        fd, name = tempfile.mkstemp(prefix=f"{prefix}-", suffix=suffix)
        return fd, Path(name)
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    path = directory / f"{prefix}-{secrets.token_hex(8)}{suffix}"
    return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), path


def clean_old_temp_outputs(max_age_s: float = TEMP_OUTPUT_MAX_AGE_S, now: float | None = None) -> list[Path]:
    """Remove this user's full-output files in the system temp dir older than ``max_age_s`` (a day)."""
    import tempfile
    import time

    removed: list[Path] = []
    cutoff = (now if now is not None else time.time()) - max_age_s
    root = tempfile.gettempdir()
    try:
        entries = list(os.scandir(root))  # one listing, however many other files the temp dir holds
    except OSError:
        return removed
    for entry in entries:
        name = os.path.normcase(entry.name)
        if not any(name.startswith(prefix) and name.endswith(suffix) and len(name) >= len(prefix) + len(suffix)
                   for prefix, suffix in FULL_OUTPUT_NAMES):
            continue
        try:
            info = entry.stat(follow_symlinks=False)
            if entry.is_symlink() or not entry.is_file(follow_symlinks=False) or info.st_uid != os.getuid() \
                    or info.st_mtime >= cutoff:
                continue
            os.unlink(entry.path)
        except OSError:
            continue  # another pi removed it first, or it is not ours to remove
        removed.append(Path(entry.path))
    return removed


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
