"""The interactive rows: how soon after spawn the editor takes keys, measured on a pseudo-terminal.

The harness starts on a fresh pty (100x30, ``TERM=xterm-256color``) whose line discipline does not echo,
so a typed character shows up in the output only when the harness's editor draws it. A marker character
is typed at spawn and again every few milliseconds (a harness that flushes pending input at start still
gets one) until it appears in the output; the row is the time from spawn to then. The fake terminal
answers the queries terminals answer (cursor position, device attributes), as the harnesses may wait for
them. The ``ui`` metric is spawn → the footer naming the model drawn (the whole UI up). The harness is then
sent SIGTERM (SIGKILL if it lingers).
"""

from __future__ import annotations

import fcntl
import os
import select
import signal
import struct
import subprocess
import termios
import time
from pathlib import Path

from bench.scenarios_harness import PRINT_ARGS, Child, Harness, Sample
from pi_core.testing.pi_home import FAKE_MODEL

MARKER = "ж"  # in no harness's start-up text
COLUMNS, ROWS = 100, 30
TYPE_EVERY = 0.005
REPLIES = {b"\x1b[6n": b"\x1b[1;1R", b"\x1b[c": b"\x1b[?62;22c"}  # cursor position, primary device attributes


def interactive_child(h: Harness, home: Path, cwd: Path) -> Child:
    """The child of one interactive row: the harness with the fake provider's model, no session file."""
    env = h.env(home, {"TERM": "xterm-256color", "COLORTERM": "truecolor"})
    for name in ("NO_COLOR", "COLUMNS", "LINES", "TMUX"):
        env.pop(name, None)
    return Child([*h.argv, *PRINT_ARGS, "--no-session"], env, cwd, expect=MARKER, timeout=60.0)


def measure_pty(child: Child) -> Sample:
    """Spawn ``child`` on a pty and time spawn → the typed marker echoed (see the module doc)."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLUMNS, 0, 0))
    attrs = termios.tcgetattr(slave)
    attrs[3] &= ~termios.ECHO  # only the harness may draw what is typed
    termios.tcsetattr(slave, termios.TCSANOW, attrs)
    marker = (child.expect or MARKER).encode()
    start = time.perf_counter()
    process = subprocess.Popen(child.argv, cwd=child.cwd, env=child.env, stdin=slave, stdout=slave, stderr=slave,
                               start_new_session=True)
    os.close(slave)
    ui: float | None = None
    try:
        seen, output = _type_until_echoed(master, marker, start, child.timeout, process)
        if seen is not None:
            # all but the last letter: a UI drawing the footer flush right may write the last column apart
            ui, output = _read_until(master, FAKE_MODEL[:-1].encode(), output, start + child.timeout)
    finally:
        usage = _stop(process)
        os.close(master)
    end = time.perf_counter()
    peak, cpu = (usage.ru_maxrss, usage.ru_utime + usage.ru_stime) if usage is not None else (None, None)
    if seen is None:
        text = " ".join(output.decode(errors="replace").split())[-300:]
        why = "it exited" if process.returncode is not None else f"timed out after {child.timeout:.0f} s"
        return Sample(end - start, peak, False, f"the typed marker never appeared ({why}); output: {text!r}", cpu,
                      start, end)
    metrics = {"ui": ui - start} if ui is not None else {}
    return Sample(seen - start, peak, True, cpu_seconds=cpu, started=start, ended=end, metrics=metrics)


def _type_until_echoed(master: int, marker: bytes, start: float, timeout: float,
                       process: subprocess.Popen[bytes]) -> tuple[float | None, bytes]:
    output = b""
    next_key = start
    while time.perf_counter() - start < timeout:
        now = time.perf_counter()
        if now >= next_key:
            os.write(master, marker)
            next_key = now + TYPE_EVERY
        ready, _, _ = select.select([master], [], [], max(0.0, next_key - time.perf_counter()))
        if not ready:
            if process.poll() is not None:
                break
            continue
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the child closed the terminal
            break
        seen = time.perf_counter()
        output += chunk
        _answer(master, chunk)
        if marker in output:
            return seen, output
    return None, output


def _read_until(master: int, text: bytes, output: bytes, deadline: float) -> tuple[float | None, bytes]:
    while text not in output:
        ready, _, _ = select.select([master], [], [], max(0.0, deadline - time.perf_counter()))
        if not ready:
            return None, output
        try:
            chunk = os.read(master, 65536)
        except OSError:
            return None, output
        output += chunk
        _answer(master, chunk)
    return time.perf_counter(), output


def _answer(master: int, chunk: bytes) -> None:
    for query, reply in REPLIES.items():
        if query in chunk:
            os.write(master, reply)


def _stop(process: subprocess.Popen[bytes]) -> os.struct_rusage | None:  # type: ignore[name-defined]
    """SIGTERM the harness's process group, SIGKILL after 5 s; its rusage (peak RSS KiB, CPU) once reaped."""
    def signal_group(signum: int) -> None:
        try:
            os.killpg(process.pid, signum)
        except ProcessLookupError:
            pass

    if process.returncode is not None:  # already reaped by poll()
        return None
    signal_group(signal.SIGTERM)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        pid, status, usage = os.wait4(process.pid, os.WNOHANG)
        if pid:
            process.returncode = os.waitstatus_to_exitcode(status)
            return usage
        time.sleep(0.01)
    signal_group(signal.SIGKILL)
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    return usage

