"""Start a task's pi so that nothing it spawns can outlive the task, and kill such a tree completely.

Every process of a task carries ``PI_BATCH_TASK=<run>/<task>/<attempt>`` in its environment. Killing a
task kills pi's process group, every descendant (bash tools run in process groups of their own) and,
on Linux, any process still carrying the marker: a daemon that double-forked away from the tree too.
pi itself is started with a parent-death signal, so a dead worker cannot leave it behind.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterable, Mapping

from pi_core.toolkit.procs import kill_group

MARKER = "PI_BATCH_TASK"
RUN_MARKER = "PI_BATCH_RUN"

# pi's CLI, with SIGTERM as the parent-death signal (Linux): if the worker that started it dies, pi
# receives SIGTERM, kills the shells it started and exits.
_LAUNCH = (
    "import sys\n"
    "if sys.platform.startswith('linux'):\n"
    "    import ctypes, signal\n"
    "    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)\n"  # PR_SET_PDEATHSIG
    "from pi_core.app.cli import cli\n"
    "cli()\n"
)


def pi_command() -> list[str]:
    """The command that runs pi (this interpreter, so every task sees the same installed plugins)."""
    return [sys.executable, "-c", _LAUNCH]


def spawn(argv: list[str], *, cwd: str, env: Mapping[str, str]) -> subprocess.Popen[bytes]:
    """Start ``argv`` with pipes on all three streams, as the leader of a new session.

    A new session keeps the terminal's Ctrl-C away from the tasks: the batch runner decides how they stop.
    """
    return subprocess.Popen(argv, cwd=cwd, env=dict(env), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=sys.platform != "win32")


def kill_tree(process: subprocess.Popen[bytes], marker: str | None = None) -> None:
    """SIGKILL ``process``, its group, its descendants, and every process whose environment has ``marker``."""
    kill_group(process.pid)
    if marker is not None:
        kill_marked(MARKER, marker)
    try:
        process.wait(5)
    except subprocess.TimeoutExpired:
        pass  # unkillable (uninterruptible sleep): nothing more we can do from here


def kill_marked(name: str, value: str) -> list[int]:
    """Kill every process of ours whose environment says ``name=value`` (Linux; elsewhere a no-op)."""
    if not sys.platform.startswith("linux"):
        return []
    killed = []
    for pid in marked_pids(name, value):
        try:
            if os.getpgid(pid) == pid:
                os.killpg(pid, signal.SIGKILL)
            else:
                os.kill(pid, signal.SIGKILL)
            killed.append(pid)
        except (ProcessLookupError, PermissionError):
            continue  # gone meanwhile, or not ours
    return killed


def marked_pids(name: str, value: str) -> list[int]:
    """Live processes whose environment has ``name=value`` exactly (``value`` ending in "/" is a prefix)."""
    wanted = f"{name}={value}".encode()
    prefix = value.endswith("/")
    own = os.getpid()
    found: list[int] = []
    for pid in _pids():
        if pid == own:
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as handle:
                entries = handle.read().split(b"\0")
        except OSError:
            continue  # exited, or another user's
        matches = any(entry.startswith(wanted) if prefix else entry == wanted for entry in entries)
        if matches and not _is_zombie(pid):
            found.append(pid)
    return found


def _pids() -> Iterable[int]:
    try:
        return [int(name) for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return []


def _is_zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().rsplit(b")", 1)[1].split()[0] == b"Z"
    except (OSError, IndexError):
        return True
