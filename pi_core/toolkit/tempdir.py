"""Temp files: one directory per pi run for scratch files, removed when the process exits; and the
full-output files of long commands, which outlive the run (the model and the user were given their path).

Full-output files go where the session keeps them (``<session>.outputs/``, see
``pi_core.sessions.outputs``), or, without a session file, into the system temp dir as Pi does, under an
unpredictable name; ``clean_old_temp_outputs`` removes those older than a day at start-up (when one
can be that old: ``clean_temp_outputs_when_due``).
"""

from __future__ import annotations

import atexit
import os
import stat
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
# (whose suffix is the resource's own, so the file opens in the right program), codemode's long outputs and images:
# (name prefix, suffix).
FULL_OUTPUT_NAMES = (("pi-bash-", ".log"), ("pi-powershell-", ".log"), ("pi-mcp-", ""), ("pi-codemode-", ""))
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
    import time

    return _clean_temp_outputs(max_age_s, now if now is not None else time.time())[0]


def clean_temp_outputs_when_due(max_age_s: float = TEMP_OUTPUT_MAX_AGE_S) -> list[Path]:
    """``clean_old_temp_outputs`` at start-up, skipped while none of the outputs can be old enough yet.

    Each cleaning sets the modification time of a stamp file in the temp dir to when the oldest output it
    left turns ``max_age_s`` old (an output made later is younger), so most starts read one file's times
    instead of listing the temp dir and every output in it.
    """
    import tempfile
    import time

    now = time.time()
    stamp = os.path.join(tempfile.gettempdir(), f"{_DUE_STAMP}{os.getuid()}")
    try:
        info = os.lstat(stamp)
        if stat.S_ISREG(info.st_mode) and info.st_uid == os.getuid() and now < info.st_mtime <= now + max_age_s:
            return []
    except OSError:
        pass
    removed, oldest = _clean_temp_outputs(max_age_s, now)
    due = min(oldest, now) + max_age_s
    try:
        os.close(os.open(stamp, os.O_WRONLY | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600))
        os.utime(stamp, (due, due), follow_symlinks=False)
    except OSError:
        pass  # e.g. another user's file of that name: every start cleans, as without a stamp
    return removed


_DUE_STAMP = "pi-outputs-due-"  # + uid: the stamp of clean_temp_outputs_when_due


def _clean_temp_outputs(max_age_s: float, now: float) -> tuple[list[Path], float]:
    """(the outputs removed, the modification time of the oldest one left: ``now`` when none is)."""
    import tempfile

    removed: list[Path] = []
    oldest = now
    cutoff = now - max_age_s
    root = tempfile.gettempdir()
    try:
        entries = list(os.scandir(root))  # one listing, however many other files the temp dir holds
    except OSError:
        return removed, oldest
    prefixes = tuple(prefix for prefix, _suffix in FULL_OUTPUT_NAMES)
    for entry in entries:
        name = os.path.normcase(entry.name)
        if not name.startswith(prefixes) or not any(  # the first test turns away the other programs' files at once
                name.startswith(prefix) and name.endswith(suffix) and len(name) >= len(prefix) + len(suffix)
                for prefix, suffix in FULL_OUTPUT_NAMES):
            continue
        try:
            info = entry.stat(follow_symlinks=False)
            if entry.is_symlink() or not entry.is_file(follow_symlinks=False) or info.st_uid != os.getuid():
                continue
            if info.st_mtime >= cutoff:
                oldest = min(oldest, info.st_mtime)
                continue
            os.unlink(entry.path)
        except OSError:
            continue  # another pi removed it first, or it is not ours to remove
        removed.append(Path(entry.path))
    return removed, oldest


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
