"""Run a shell command with bounded output capture, throttled progress and Pi's outcome texts.

Shared by the ``bash`` and ``powershell`` tools (``run_shell_tool``) and by the CLI's ``!cmd`` and
the RPC ``bash`` command (``run_command``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from pi_core.errors import ToolError
from pi_core.signals import AbortSignal
from pi_core.toolkit.procs import (
    ExecAborted,
    ExecOptions,
    ExecTimedOut,
    LocalShellOperations,
    ShellOperations,
    js_number,
)
from pi_core.toolkit.shell_output import OutputAccumulator, Snapshot
from pi_core.tools import ToolResult

UPDATE_INTERVAL_SECONDS = 0.1


@dataclass
class ShellOutcome:
    """How the command ended and what it printed (``snapshot`` is taken after the last byte)."""

    snapshot: Snapshot
    exit_code: int | None
    aborted: bool = False
    timed_out: bool = False


class _Throttle:
    """Send at most one progress update per interval; a trailing update follows the last burst."""

    def __init__(self, acc: OutputAccumulator, lock: threading.Lock, emit: Callable[[ToolResult], None]) -> None:
        self._acc, self._lock, self._emit = acc, lock, emit
        self._last = 0.0
        self._pending = False
        self._timer: threading.Timer | None = None
        self._finished = False

    def data_arrived(self) -> None:
        with self._lock:
            if self._finished:
                return
            self._pending = True
            due = self._last + UPDATE_INTERVAL_SECONDS - time.monotonic()
            if due > 0:
                if self._timer is None:
                    self._timer = threading.Timer(due, self._fire)
                    self._timer.daemon = True
                    self._timer.start()
                return
        self._fire()

    def _fire(self) -> None:
        with self._lock:
            self._timer = None
            if self._finished or not self._pending:
                return
            self._pending = False
            self._last = time.monotonic()
            snap = self._acc.snapshot()
            # Emitting under the lock keeps updates in order and none after ``finish``.
            self._emit(ToolResult.text(snap.text, snap.update_details()))

    def finish(self) -> None:
        """Flush pending data once, then stop for good."""
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
        self._fire()
        with self._lock:
            self._finished = True


def execute_shell(command: str, cwd: str, *, operations: ShellOperations | None = None,
                  signal: AbortSignal | None = None, timeout: float | None = None,
                  env: Mapping[str, str] | None = None, on_update: Callable[[ToolResult], None] | None = None,
                  temp_prefix: str = "pi-bash", output_dir: Path | None = None) -> ShellOutcome:
    """Run ``command`` through ``operations.exec`` and capture its output; never raises for abort/timeout."""
    ops = operations or LocalShellOperations()
    acc = OutputAccumulator(temp_prefix=temp_prefix, output_dir=output_dir)
    lock = threading.Lock()
    throttle = _Throttle(acc, lock, on_update) if on_update is not None else None
    if on_update is not None:
        on_update(ToolResult(content=[], details=None))

    def on_data(chunk: bytes) -> None:
        with lock:
            acc.append(chunk)
        if throttle is not None:
            throttle.data_arrived()

    aborted = timed_out = False
    exit_code: int | None = None
    try:
        exit_code = ops.exec(command, cwd, ExecOptions(on_data=on_data, signal=signal, timeout=timeout, env=env))
    except ExecAborted:
        aborted = True
    except ExecTimedOut:
        timed_out = True
    except Exception as err:
        # Third-party operations may signal with Pi's plain messages instead of our exception types.
        if str(err) == "aborted":
            aborted = True
        elif str(err).startswith("timeout:"):
            timed_out = True
        else:
            _finish(acc, lock, throttle)
            raise
    _finish(acc, lock, throttle)
    with lock:
        snapshot = acc.snapshot()
    return ShellOutcome(snapshot, exit_code, aborted, timed_out)


def _finish(acc: OutputAccumulator, lock: threading.Lock, throttle: _Throttle | None) -> None:
    with lock:
        acc.close()
    if throttle is not None:
        throttle.finish()


STRUCTURED_OUTPUT_MAX_BYTES = 1024 * 1024


def shell_tool_result(outcome: ShellOutcome, timeout: float | None, wall_seconds: float | None = None) -> ToolResult:
    """Pi's result for a finished command, raising ``ToolError`` for non-zero exit, timeout and abort; with
    ``wall_seconds``, a success and a non-zero exit carry the command's data as ``structured_content``."""
    snap = outcome.snapshot
    output = snap.formatted() if snap.text or snap.truncation.truncated else ""
    if outcome.timed_out:
        message = f"Command timed out after {js_number(timeout or 0)} seconds"
        raise ToolError(f"{output}\n\n{message}" if output else message)
    if outcome.aborted:
        raise ToolError(f"{output}\n\nCommand aborted" if output else "Command aborted")
    text = output or "(no output)"
    if outcome.exit_code not in (0, None):
        failed = ToolError(f"{text}{_sandbox_note(text)}\n\nCommand exited with code {outcome.exit_code}")
        failed.structured_content = None if wall_seconds is None else structured_output(outcome, wall_seconds)  # type: ignore[attr-defined]
        raise failed
    result = ToolResult.text(text, snap.details())
    result.structured_content = None if wall_seconds is None else structured_output(outcome, wall_seconds)
    return result


def structured_output(outcome: ShellOutcome, wall_seconds: float) -> dict[str, object]:
    """Pi 1.6.0's ``structuredContent`` of a command: its whole output up to 1 MiB (read back from the spill
    file when the model's copy was cut), whether that is cut, the exit code and the wall time (0.1 s steps)."""
    snap = outcome.snapshot
    output, truncated = snap.text, snap.truncation.truncated
    if truncated and snap.full_output_path is not None:
        try:
            with open(snap.full_output_path, "rb") as spilled:
                data = spilled.read(STRUCTURED_OUTPUT_MAX_BYTES + 1)
            truncated = len(data) > STRUCTURED_OUTPUT_MAX_BYTES
            output = data[:STRUCTURED_OUTPUT_MAX_BYTES].decode("utf-8", errors="replace")
        except OSError:
            pass  # the tail the model got is what there is
    out: dict[str, object] = {"output": output, "truncated": truncated}
    if truncated and snap.full_output_path is not None:
        out["full_output_path"] = snap.full_output_path
    out["exit_code"] = outcome.exit_code
    tenths = round(wall_seconds, 1)
    out["wall_time_seconds"] = int(tenths) if tenths.is_integer() else tenths  # JSON ``0``, as Pi writes it
    return out


def _sandbox_note(output: str) -> str:
    """Under a sandbox, a line saying what it forbids when a failure looks like its doing (else "")."""
    from pi_core.toolkit.sandbox import active

    sandbox = active()
    note = sandbox.explain(output) if sandbox is not None else None
    return f"\n\n{note}" if note else ""


class BashResult(NamedTuple):
    """What ``!cmd`` and RPC ``bash`` need: the kept tail, how it ended, and where the rest is."""

    output: str
    exit_code: int | None
    cancelled: bool
    truncated: bool
    full_output_path: str | None


def run_command(command: str, cwd: str, *, shell_path: str | None = None, signal: AbortSignal | None = None,
                timeout: float | None = None, env: Mapping[str, str] | None = None,
                operations: ShellOperations | None = None,
                on_output: Callable[[str], None] | None = None, output_dir: Path | None = None) -> BashResult:
    """Run a user's shell command outside the tool loop (``!cmd``, RPC ``bash``).

    ``output`` is the tail-truncated text without a notice; ``exit_code`` is None when cancelled,
    timed out or killed by a signal. ``on_output`` receives throttled snapshots of the tail.
    """
    ops = operations or LocalShellOperations(shell_path=shell_path)
    on_update = None
    if on_output is not None:
        def on_update(partial: ToolResult) -> None:
            if partial.content:
                on_output(partial.content[0].text)  # type: ignore[union-attr]
    outcome = execute_shell(command, cwd, operations=ops, signal=signal, timeout=timeout, env=env,
                            on_update=on_update, output_dir=output_dir)
    snap = outcome.snapshot
    cancelled = outcome.aborted or outcome.timed_out
    return BashResult(snap.text, None if cancelled else outcome.exit_code, cancelled,
                      snap.truncation.truncated, snap.full_output_path)
