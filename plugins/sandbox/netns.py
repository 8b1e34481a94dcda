"""One private network for all the commands of a run under bubblewrap (``sandbox.network`` off, or a host list).

At start pi has bwrap make a user namespace and a network namespace with only a loopback, and keeps both open
by descriptor; each command enters them with ``nsenter`` before bwrap confines it. So the commands of a run
share one loopback (a server one of them starts answers the next on localhost), and for a host list one
bridge (``bridge.py``), started once, forwards ``127.0.0.1:PROXY_PORT`` to pi's proxy: a command pays for
neither a new network namespace nor a Python start. Without ``nsenter``, or when this set-up fails, ``enter``
answers None and each command gets a network namespace of its own instead (as confined, slower, alone).
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import shutil
import subprocess
import sys
import threading
import time

from pi_plugins.sandbox.base import PROXY_PORT

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

READY_TIMEOUT_S = 10.0
BRIDGE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bridge.py")


class SharedNetwork:
    """The run's network namespace: made by ``begin``, joined on the first ``enter``, gone after ``close``."""

    def __init__(self, bwrap: str, nsenter: str, proxy_socket: str | None) -> None:
        self.bwrap, self.nsenter, self.proxy_socket = bwrap, nsenter, proxy_socket
        self._holder: subprocess.Popen[bytes] | None = None
        self._info: int | None = None  # bwrap's --info-fd: the namespaces' process id
        self._namespaces: list[int] = []  # user, net: open, so they outlive the holder
        self._prefix: list[str] | None = None
        self._failed = False
        self._lock = threading.Lock()

    @classmethod
    def begin(cls, bwrap: str, proxy_socket: str | None) -> SharedNetwork | None:
        """Start making the namespaces (without waiting: that overlaps with the rest of pi's start); None
        without ``nsenter``."""
        nsenter = shutil.which("nsenter")
        if nsenter is None:
            return None
        network = cls(bwrap, nsenter, proxy_socket)
        network._spawn()
        return network

    def _spawn(self) -> None:
        read, write = os.pipe()
        # The holder only has to exist until pi opened its namespaces; with a host list it serves the bridge.
        hold = [sys.executable, "-I", "-S", BRIDGE, self.proxy_socket, str(PROXY_PORT)] if self.proxy_socket \
            else ["cat"]
        try:
            self._holder = subprocess.Popen(
                [self.bwrap, "--unshare-user", "--unshare-net", "--cap-drop", "ALL", "--ro-bind", "/", "/",
                 "--info-fd", str(write), "--", *hold],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, pass_fds=(write,),
                start_new_session=True)  # the terminal's Ctrl-C is for pi, not for the bridge
        except OSError:
            os.close(read)
            self._failed = True
        else:
            self._info = read
        finally:
            os.close(write)

    def enter(self) -> list[str] | None:
        """The command-line prefix that puts a command in the run's network, or None: give it its own."""
        with self._lock:
            if self._prefix is None and not self._failed:
                try:
                    self._prefix = self._join()
                except (OSError, ValueError, KeyError, subprocess.SubprocessError):
                    self._prefix = None
                if self._prefix is None:
                    self._failed = True
                    self._stop()
            return self._prefix

    def _join(self) -> list[str] | None:
        holder, info = self._holder, self._info
        assert holder is not None and holder.stdin is not None and holder.stdout is not None and info is not None
        deadline = time.monotonic() + READY_TIMEOUT_S
        pid = int(json.loads(_read_until(info, lambda seen: seen.rstrip().endswith(b"}"), deadline))["child-pid"])
        self._namespaces = [os.open(f"/proc/{pid}/ns/{kind}", os.O_RDONLY | os.O_CLOEXEC) for kind in ("user", "net")]
        if self.proxy_socket is not None:
            _read_until(holder.stdout.fileno(), lambda seen: b"ready\n" in seen, deadline)
        else:
            self._stop_holder()  # the open descriptors keep both namespaces
        me = os.getpid()  # nsenter, pi's child, opens pi's descriptors: none leaks into the command
        user, net = self._namespaces
        prefix = [self.nsenter, f"--user=/proc/{me}/fd/{user}", f"--net=/proc/{me}/fd/{net}",
                  "--preserve-credentials", "--"]
        tried = subprocess.run([*prefix, shutil.which("true") or "/bin/true"], stdin=subprocess.DEVNULL,
                               capture_output=True, timeout=READY_TIMEOUT_S, check=False)
        return prefix if tried.returncode == 0 else None

    def close(self) -> None:
        with self._lock:
            self._failed, self._prefix = True, None
            self._stop()

    def _stop(self) -> None:
        self._stop_holder()
        for fd in (self._info, *self._namespaces):
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._info, self._namespaces = None, []

    def _stop_holder(self) -> None:
        holder, self._holder = self._holder, None
        if holder is None:
            return
        assert holder.stdin is not None and holder.stdout is not None
        with contextlib.suppress(OSError):
            holder.stdin.close()  # the holder ends when its stdin does
        try:
            holder.wait(timeout=2)
        except subprocess.TimeoutExpired:
            holder.kill()
            holder.wait()
        holder.stdout.close()


def _read_until(fd: int, done: Callable[[bytes], bool], deadline: float) -> bytes:
    seen = b""
    while not done(seen):
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            raise TimeoutError("the sandbox's network namespace did not come up in time")
        chunk = os.read(fd, 4096)
        if not chunk:
            raise OSError("the sandbox's network holder ended before it was ready")
        seen += chunk
    return seen
