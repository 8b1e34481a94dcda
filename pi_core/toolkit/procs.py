"""Shell processes in their own process group: pick the shell, spawn, stream output, kill the whole tree.

``ShellOperations`` is the seam a plugin replaces to run bash/powershell elsewhere (SSH, a
container): the tools only need ``exec`` to stream raw bytes to ``on_data`` and return the exit code.
"""

from __future__ import annotations

import os
import selectors
import shutil
import signal as signals
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from pi_core.errors import ToolError
from pi_core.signals import AbortSignal

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]

# After the shell exits, a backgrounded descendant (``sleep 100 &``) may still hold the pipe open;
# stop reading this long after the exit instead of waiting for it.
PIPE_GRACE_SECONDS = 0.1
_READ_SIZE = 1 << 20


class ExecAborted(Exception):
    """``exec`` stopped because the abort signal fired (message ``aborted``, as Pi's operations use)."""

    def __init__(self) -> None:
        super().__init__("aborted")


class ExecTimedOut(Exception):
    """``exec`` stopped because the timeout fired (message ``timeout:{secs}``)."""

    def __init__(self, timeout: float) -> None:
        super().__init__(f"timeout:{js_number(timeout)}")
        self.timeout = timeout


def js_number(value: float) -> str:
    """Print a number the way JavaScript does for the common cases: ``1``, ``0.5``, ``2.5``."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


@dataclass(frozen=True)
class ShellConfig:
    """The shell executable and the arguments that precede the command string."""

    path: str
    args: tuple[str, ...] = ("-c",)

    def argv(self, command: str) -> list[str]:
        return [self.path, *self.args, command]


def resolve_shell(shell_path: str | None = None) -> ShellConfig:
    """The configured ``shell_path`` if it exists, else /bin/bash, bash on PATH, then sh."""
    if shell_path:
        if os.path.exists(shell_path):
            return ShellConfig(shell_path)
        raise ToolError(f"Custom shell path not found: {shell_path}\nPlease update shellPath in your settings")
    if sys.platform == "win32":
        return _windows_bash()
    if os.path.exists("/bin/bash"):
        return ShellConfig("/bin/bash")
    return ShellConfig(shutil.which("bash") or "sh")


def _windows_bash() -> ShellConfig:
    candidates = [
        f"{os.environ[var]}\\Git\\bin\\bash.exe" for var in ("ProgramFiles", "ProgramFiles(x86)") if var in os.environ
    ]
    for candidate in candidates:
        if os.path.exists(candidate):
            return ShellConfig(candidate)
    on_path = shutil.which("bash.exe")
    if on_path:
        return ShellConfig(on_path)
    searched = "\n".join(f"  {c}" for c in candidates)
    raise ToolError(
        "No bash shell found. Options:\n"
        "  1. Install Git for Windows: https://git-scm.com/download/win\n"
        "  2. Add your bash to PATH (Cygwin, MSYS2, etc.)\n"
        "  3. Set shellPath in your settings\n\n"
        f"Searched Git Bash in:\n{searched}"
    )


def shell_env(overrides: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for a shell command: ours, with ``overrides`` applied on top."""
    env = dict(os.environ)
    if overrides:
        env.update(overrides)
    return env


# Children still running, so the CLI can kill them when pi itself is terminated.
_live_groups: set[int] = set()
_live_lock = threading.Lock()


def spawn_group(argv: list[str], cwd: str, env: Mapping[str, str] | None) -> subprocess.Popen[bytes]:
    """Start ``argv`` as the leader of a new process group, stdout and stderr merged into one pipe.

    One shared pipe keeps the two streams in exact arrival order. A missing executable raises
    ``ToolError("spawn {path} ENOENT")``, the text Pi shows for it. With a sandbox active
    (``pi_core.toolkit.sandbox``) the process starts inside it, and so do all its descendants.
    """
    from pi_core.toolkit.sandbox import confine

    spawn = confine(argv, env)
    try:
        # A sandbox's preexec_fn is two system calls on a ruleset built before the fork: no lock to inherit.
        proc = subprocess.Popen(
            spawn.argv, cwd=cwd, env=spawn.env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, start_new_session=sys.platform != "win32",
            preexec_fn=spawn.preexec_fn,  # noqa: PLW1509
        )
    except FileNotFoundError as err:
        raise ToolError(f"spawn {argv[0]} ENOENT") from err
    except PermissionError as err:
        raise ToolError(f"spawn {argv[0]} EACCES") from err
    except subprocess.SubprocessError as err:  # the sandbox's set-up in the child failed: nothing ran
        raise ToolError(f"spawn {argv[0]}: the sandbox could not confine it ({err})") from err
    with _live_lock:
        _live_groups.add(proc.pid)
    return proc


def kill_group(pid: int) -> None:
    """SIGKILL the process group led by ``pid`` (its whole tree), falling back to the pid alone."""
    if sys.platform == "win32":
        subprocess.run(["taskkill", "/F", "/T", "/PID", str(pid)], capture_output=True, check=False)
        return
    # A child that called setsid (or setpgid) left the group but is still a descendant while its parent
    # lives: collect those before the group dies and they are handed to init.
    strays = _descendants(pid) if sys.platform.startswith("linux") else []
    try:
        os.killpg(pid, signals.SIGKILL)
    except ProcessLookupError:
        try:
            os.kill(pid, signals.SIGKILL)
        except ProcessLookupError:
            pass  # already gone: nothing left to kill
    for child in strays:
        try:
            os.kill(child, signals.SIGKILL)
        except ProcessLookupError:
            pass  # died with its group


def _descendants(pid: int) -> list[int]:
    """Every live descendant of ``pid``, from the parent links in ``/proc`` (Linux)."""
    children: dict[int, list[int]] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return []
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                ppid = int(handle.read().rsplit(b")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue  # exited meanwhile
        children.setdefault(ppid, []).append(int(name))
    found: list[int] = []
    stack = [pid]
    while stack:
        for child in children.get(stack.pop(), []):
            found.append(child)
            stack.append(child)
    return found


def kill_all_children() -> None:
    """Kill every shell pi started that is still running (the CLI calls this on SIGTERM/SIGHUP)."""
    with _live_lock:
        groups = list(_live_groups)
        _live_groups.clear()
    for pid in groups:
        kill_group(pid)


def _forget(pid: int) -> None:
    with _live_lock:
        _live_groups.discard(pid)


@dataclass
class ExecOptions:
    """What ``ShellOperations.exec`` gets besides the command and cwd."""

    on_data: Callable[[bytes], None]
    signal: AbortSignal | None = None
    timeout: float | None = None
    env: Mapping[str, str] | None = None


class ShellOperations(Protocol):
    """Runs a command somewhere and streams its combined output.

    ``exec`` calls ``options.on_data`` with raw byte chunks and returns the exit code, or None when a
    signal killed the process. It raises ``ExecAborted`` when ``options.signal`` fires and
    ``ExecTimedOut`` when ``options.timeout`` (seconds, only if > 0) passes, after killing what it
    started. Any other exception is shown to the model as is. ``exec`` blocks; tools call it from
    a worker thread.
    """

    def exec(self, command: str, cwd: str, options: ExecOptions) -> int | None: ...


@dataclass
class LocalShellOperations:
    """Run commands on this machine with a local shell (``shell_path`` or the platform default).

    ``shell`` bypasses resolution entirely (a ready ``ShellConfig``); powershell passes its own.
    """

    shell_path: str | None = None
    shell: ShellConfig | None = None
    missing_cwd_hint: str = "Cannot execute bash commands."
    _resolved: ShellConfig | None = field(default=None, init=False, repr=False)

    def shell_config(self) -> ShellConfig:
        if self.shell is not None:
            return self.shell
        if self._resolved is None:
            self._resolved = resolve_shell(self.shell_path)
        return self._resolved

    def exec(self, command: str, cwd: str, options: ExecOptions) -> int | None:
        shell = self.shell_config()
        if not os.path.isdir(cwd):
            raise ToolError(f"Working directory does not exist: {cwd}\n{self.missing_cwd_hint}")
        proc = spawn_group(shell.argv(command), cwd, options.env)
        try:
            return _pump(proc, options)
        finally:
            _forget(proc.pid)


def _pump(proc: subprocess.Popen[bytes], options: ExecOptions) -> int | None:
    """Stream the pipe to ``on_data`` until the shell is done; enforce the timeout and abort."""
    assert proc.stdout is not None
    why_killed: list[str] = []
    kill_lock = threading.Lock()

    def kill(reason: str) -> None:
        with kill_lock:
            # Once reaped, the pid may belong to someone else.
            if not why_killed and proc.returncode is None:
                why_killed.append(reason)
                kill_group(proc.pid)

    remove_abort = options.signal.add_callback(lambda: kill("aborted")) if options.signal else None
    timer = None
    if options.timeout is not None and options.timeout > 0:
        # A huge timeout (1e308) would overflow the timer thread's wait; the cap is centuries anyway.
        timer = threading.Timer(min(options.timeout, threading.TIMEOUT_MAX), kill, args=("timeout",))
        timer.daemon = True
        timer.start()

    fd = proc.stdout.fileno()
    os.set_blocking(fd, False)
    _widen_pipe(fd)
    exited_at: float | None = None
    next_exit_check = 0.0
    try:
        with selectors.DefaultSelector() as selector:
            selector.register(fd, selectors.EVENT_READ)
            while True:
                # Read straight away while data streams in; wait in select only when the pipe is empty.
                got = _read_into(fd, options.on_data)
                if got is None:
                    break
                now = time.monotonic()
                if got and now < next_exit_check:
                    continue
                next_exit_check = now + 0.05
                if exited_at is None:
                    if proc.poll() is not None:
                        exited_at = now
                elif now >= exited_at + PIPE_GRACE_SECONDS:
                    # Take what the shell left in the pipe; a descendant may keep it open forever.
                    while _read_into(fd, options.on_data):
                        pass
                    break
                if not got:
                    wait = 0.05 if exited_at is None else max(0.0, exited_at + PIPE_GRACE_SECONDS - now)
                    selector.select(wait)
        code = proc.wait()
    finally:
        if timer is not None:
            timer.cancel()
        if remove_abort is not None:
            remove_abort()
        proc.stdout.close()
    if why_killed and why_killed[0] == "aborted":
        raise ExecAborted()
    if why_killed:
        raise ExecTimedOut(options.timeout or 0)
    if options.signal is not None and options.signal.aborted:
        raise ExecAborted()
    return None if code < 0 else code


def _read_into(fd: int, on_data: Callable[[bytes], None]) -> bool | None:
    """Read one chunk into ``on_data``: True if data came, False if none is waiting, None at end of file."""
    try:
        chunk = os.read(fd, _READ_SIZE)
    except BlockingIOError:
        return False
    if not chunk:
        return None
    on_data(chunk)
    return True


def _widen_pipe(fd: int) -> None:
    """Ask for a 1 MiB pipe (Linux): fewer wake-ups for a fast writer such as ``seq``."""
    set_size = getattr(fcntl, "F_SETPIPE_SZ", None) if fcntl is not None else None
    if set_size is None:
        return
    try:
        fcntl.fcntl(fd, set_size, _READ_SIZE)
    except OSError:
        pass  # over the user's pipe-buffer quota: the default size still works, only slower
