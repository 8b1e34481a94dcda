"""Locate and start ``rg`` (on PATH, or the PyPI ``ripgrep`` wheel's next to our Python); nothing is downloaded."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO

from pi_core.errors import ToolError
from pi_core.signals import AbortSignal

RG_MISSING = "ripgrep (rg) is not available and could not be downloaded"


def find_rg() -> str | None:
    """``rg`` on PATH, else the one in this interpreter's bin directory (the venv's), else None."""
    on_path = shutil.which("rg")
    if on_path:
        return on_path
    name = "rg.exe" if sys.platform == "win32" else "rg"
    beside = Path(sys.executable).parent / name
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    return None


def require_rg() -> str:
    """The ``rg`` path, or ``ToolError`` with Pi's text when it is missing."""
    rg = find_rg()
    if rg is None:
        raise ToolError(RG_MISSING)
    return rg


class RgProcess:
    """``rg`` with ``args``, killed when ``signal`` aborts. Read ``stdout``, then ``close()`` (in a
    ``finally``) and, unless the signal aborted, judge the exit code; ``failure`` gives rg's own text."""

    def __init__(self, args: list[str], signal: AbortSignal, cwd: str | None = None) -> None:
        for arg in args:
            if "\x00" in arg:  # the OS refuses it ("embedded null byte"): say what to change instead
                raise ToolError(f"{arg!r} contains a NUL character, which cannot be passed to ripgrep. Remove it "
                                "from the pattern or glob and try again.")
        from pi_core.toolkit.sandbox import confine

        spawn = confine([require_rg(), *args], None)  # inside the sandbox: rg never reads what bash may not
        try:
            self.proc = subprocess.Popen(spawn.argv, cwd=cwd, env=spawn.env, stdin=subprocess.DEVNULL,
                                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                         preexec_fn=spawn.preexec_fn)  # noqa: PLW1509 - as in procs.spawn_group
        except (OSError, subprocess.SubprocessError) as err:  # SubprocessError: the sandbox could not confine it
            raise ToolError(f"Failed to run ripgrep: {err}") from err
        assert self.proc.stdout is not None
        self.stdout: IO[bytes] = self.proc.stdout
        self._stderr: list[bytes] = []
        # rg writes a warning per unreadable directory; draining them keeps it from blocking on a full pipe.
        self._reader = threading.Thread(target=self._drain, daemon=True)
        self._reader.start()
        self._remove_abort = signal.add_callback(self.proc.kill)

    def _drain(self) -> None:
        assert self.proc.stderr is not None
        self._stderr.append(self.proc.stderr.read())

    def kill(self) -> None:
        self.proc.kill()

    def close(self) -> int:
        """Stop listening for abort, wait for rg to exit and return its exit code."""
        self._remove_abort()
        self.stdout.close()
        code = self.proc.wait()
        self._reader.join()
        return code

    def failure(self, code: int) -> ToolError:
        stderr = b"".join(self._stderr).decode("utf-8", "replace").strip()
        return ToolError(stderr or f"ripgrep exited with code {code}")
