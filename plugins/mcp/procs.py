"""Last line of defence for "no MCP process outlives pi": the process groups of the stdio servers we started.

Servers are stopped properly by their connections (stdin, SIGTERM, SIGKILL through the SDK). When pi exits
without that (an error, a second Ctrl-C, ``sys.exit`` from a signal handler), an ``atexit`` hook kills the
groups still alive. The SDK does not expose the processes it spawns, so we note the children that appear while
a connection opens; each is the leader of its own group (the SDK starts servers in a new session).
"""

from __future__ import annotations

import atexit
import os
import signal

_groups: set[int] = set()
_hooked = False


def children() -> set[int]:
    """Pids whose parent is this process (Linux /proc; empty where there is none)."""
    me = os.getpid()
    found: set[int] = set()
    try:
        entries = os.listdir("/proc")
    except OSError:
        return found
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2:].split()
        if len(fields) > 1 and int(fields[1]) == me:
            found.add(int(entry))
    return found


def remember(pids: set[int]) -> None:
    global _hooked
    for pid in pids:
        try:
            if os.getpgid(pid) == pid:
                _groups.add(pid)
        except OSError:
            continue
    if _groups and not _hooked:
        _hooked = True
        atexit.register(kill_all)


def kill_all() -> None:
    """SIGKILL every remembered group that still exists."""
    for pgid in list(_groups):
        try:
            os.killpg(pgid, signal.SIGKILL)
        except OSError:
            pass
        _groups.discard(pgid)
