"""The full-output files of a session's long commands (``<session>.outputs/`` beside the session file):
deleted with their session, and removed at start-up when their session is gone for ``ORPHAN_AGE_DAYS``."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

from pi_core.config_paths import OUTPUTS_SUFFIX, session_outputs_dir, sessions_dir

ORPHAN_AGE_DAYS = 7


def delete_session(session_file: Path) -> None:
    """Delete a session file and the full outputs its commands left beside it."""
    session_file.unlink(missing_ok=True)
    shutil.rmtree(session_outputs_dir(session_file), ignore_errors=True)


def clean_orphan_outputs(extra_dirs: tuple[Path, ...] = (), *, max_age_days: float = ORPHAN_AGE_DAYS,
                         now: float | None = None) -> list[Path]:
    """Remove ``*.outputs`` folders whose session file no longer exists and that nothing touched for
    ``max_age_days``, in every project folder under the agent dir's ``sessions/`` and in ``extra_dirs``
    (a ``--session-dir``). The age keeps a session still being started (not yet written) safe."""
    cutoff = (now if now is not None else time.time()) - max_age_days * 86400
    folders = list(extra_dirs)
    root = sessions_dir()
    try:
        folders += [entry for entry in root.iterdir() if entry.is_dir() and not entry.name.endswith(OUTPUTS_SUFFIX)]
    except OSError:
        pass
    removed: list[Path] = []
    for folder in dict.fromkeys(folders):
        try:
            candidates = list(folder.glob(f"*{OUTPUTS_SUFFIX}"))
        except OSError:
            continue
        for outputs in candidates:
            session = outputs.with_name(outputs.name.removesuffix(OUTPUTS_SUFFIX) + ".jsonl")
            try:
                if session.exists() or outputs.is_symlink() or not outputs.is_dir() \
                        or _newest_mtime(outputs) >= cutoff:
                    continue
            except OSError:
                continue
            shutil.rmtree(outputs, ignore_errors=True)
            removed.append(outputs)
    return removed


def _newest_mtime(folder: Path) -> float:
    newest = folder.stat().st_mtime
    for child in folder.iterdir():
        newest = max(newest, child.lstat().st_mtime)
    return newest
