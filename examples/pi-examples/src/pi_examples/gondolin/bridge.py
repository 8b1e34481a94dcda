"""The Gondolin VM as pi sees it: the ``VmClient`` protocol and ``BridgeClient``, which speaks JSON lines to a
bridge program that owns the real micro-VM (the wire format is in the package docstring)."""

from __future__ import annotations

import base64
import binascii
import errno
import json
import os
import queue
import shlex
import subprocess
import threading
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from pi_core.errors import PiError
from pi_core.signals import AbortSignal

DEFAULT_BRIDGE = "gondolin-bridge"
BRIDGE_ENV = "PI_GONDOLIN_BRIDGE"
CLOSE_TIMEOUT = 5.0
_STDERR_LINES = 20

OnData = Callable[[bytes], None]


class GondolinError(PiError):
    """The VM cannot be reached: the bridge is missing, died, or broke the protocol. The text is for people."""


@dataclass(frozen=True)
class VmStat:
    """What ``stat`` reports (symlinks followed)."""

    type: Literal["file", "directory", "other"]
    size: int = 0

    def is_dir(self) -> bool:
        return self.type == "directory"


class VmClient(Protocol):
    """A started VM. File methods raise OSError (errno set) for a guest file-system error and GondolinError when
    the VM itself is unreachable; paths are guest paths."""

    id: str

    def exec(self, argv: list[str], *, cwd: str, env: Mapping[str, str] | None = None,
             on_stdout: OnData | None = None, on_stderr: OnData | None = None,
             signal: AbortSignal | None = None) -> int | None:
        """Run ``argv`` in the guest and stream its output; the exit code (None if a signal ended it).
        When ``signal`` fires the process is stopped and the call returns once the guest says so."""
        ...

    def read_file(self, path: str) -> bytes: ...

    def write_file(self, path: str, data: bytes) -> None: ...

    def stat(self, path: str) -> VmStat: ...

    def list_dir(self, path: str) -> list[str]: ...

    def mkdir(self, path: str) -> None:
        """Create the directory and its parents; no error if it exists."""
        ...

    def access(self, path: str) -> None:
        """Raise OSError unless ``path`` exists."""
        ...

    def close(self) -> None: ...


def bridge_command(configured: str | None = None) -> list[str]:
    """The bridge's argv: ``configured`` (the ``--gondolin-bridge`` flag), else ``$PI_GONDOLIN_BRIDGE``, else
    ``gondolin-bridge`` (not ``gondolin``: the npm package's own CLI has that name); a value with spaces is
    split like a shell command line (``node bridge.mjs``)."""
    text = configured or os.environ.get(BRIDGE_ENV) or DEFAULT_BRIDGE
    try:
        argv = shlex.split(text)
    except ValueError as err:
        raise GondolinError(f"Gondolin bridge command {text!r} cannot be parsed: {err}") from err
    if not argv:
        raise GondolinError(f"Gondolin bridge command is empty; set --gondolin-bridge or {BRIDGE_ENV}")
    return argv


class _BadMessage(Exception):
    """A line from the bridge that breaks the protocol (the text says how)."""


def _decode(data: Any) -> bytes:
    if not isinstance(data, str):
        raise _BadMessage("whose data is not a base64 string")
    try:
        return base64.b64decode(data, validate=True)
    except binascii.Error as err:
        raise _BadMessage(f"whose data is not valid base64 ({err})") from err


def _encode(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


class _Call:
    """One request in flight: stream chunks and the final answer arrive on ``inbox`` from the reader thread."""

    def __init__(self, on_stdout: OnData | None = None, on_stderr: OnData | None = None) -> None:
        self.inbox: queue.Queue[dict[str, Any] | GondolinError] = queue.Queue()
        self.streams = {"stdout": on_stdout, "stderr": on_stderr}


class BridgeClient:
    """A ``VmClient`` over a bridge process: requests are multiplexed by id, so tools may run side by side."""

    def __init__(self, argv: list[str], host_cwd: str) -> None:
        self.argv, self.host_cwd = argv, host_cwd
        self.id = ""
        self._lock = threading.Lock()
        self._next_id = 0
        self._calls: dict[int, _Call] = {}
        self._failure: GondolinError | None = None
        self._closing = False
        self._stderr: deque[str] = deque(maxlen=_STDERR_LINES)
        try:
            self._proc = subprocess.Popen(argv, cwd=host_cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                          stderr=subprocess.PIPE, start_new_session=True)
        except FileNotFoundError as err:
            raise GondolinError(f"Gondolin bridge not found: {argv[0]!r} is not on PATH. Install a bridge for "
                                f"the Gondolin VM or point --gondolin-bridge / {BRIDGE_ENV} at one.") from err
        except OSError as err:
            raise GondolinError(f"Gondolin bridge {argv[0]!r} could not be started: {err.strerror or err}") from err
        self._stderr_reader = threading.Thread(target=self._read_stderr, name="gondolin-stderr", daemon=True)
        self._stderr_reader.start()
        threading.Thread(target=self._read_stdout, name="gondolin-bridge", daemon=True).start()

    # --- lifecycle ---------------------------------------------------------------------------------------

    def start(self, guest_workspace: str, session_label: str) -> str:
        """Boot the VM with the host cwd mounted at ``guest_workspace``; returns (and keeps) the VM id."""
        result = self._request("start", {"mounts": {guest_workspace: self.host_cwd}, "sessionLabel": session_label})
        vm_id = result.get("id")
        if not isinstance(vm_id, str) or not vm_id:
            raise self._protocol_error(f"start answered without a VM id: {json.dumps(result)[:200]}")
        self.id = vm_id
        return vm_id

    def close(self) -> None:
        """Ask the bridge to stop the VM and exit; kill it if it does not within ``CLOSE_TIMEOUT`` seconds."""
        self._closing = True
        try:
            if self._failure is None:
                self._request("close", {}, timeout=CLOSE_TIMEOUT)
        except GondolinError:
            pass  # closing anyway; the process is reaped below
        finally:
            self._shut_stdin()
            try:
                self._proc.wait(CLOSE_TIMEOUT)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
            self._fail(GondolinError("Gondolin VM is closed"))

    # --- VmClient ----------------------------------------------------------------------------------------

    def exec(self, argv: list[str], *, cwd: str, env: Mapping[str, str] | None = None,
             on_stdout: OnData | None = None, on_stderr: OnData | None = None,
             signal: AbortSignal | None = None) -> int | None:
        call = _Call(on_stdout, on_stderr)
        call_id = self._send("exec", {"argv": argv, "cwd": cwd, "env": dict(env) if env is not None else None}, call)
        stopped = threading.Event()

        def stop_exec() -> None:
            stopped.set()
            self._notify_signal(call_id)

        unlink = signal.add_callback(stop_exec) if signal is not None else (lambda: None)
        try:
            # Unbounded while the command runs; once it is told to stop, the bridge has CLOSE_TIMEOUT to answer.
            result = self._wait(call_id, call, None, stopped)
        finally:
            unlink()
        code = result.get("exitCode")
        if code is not None and not isinstance(code, int):
            raise self._protocol_error(f"exec answered a non-integer exitCode {code!r}")
        return code

    def read_file(self, path: str) -> bytes:
        result = self._request("readFile", {"path": path})
        try:
            return _decode(result.get("data"))
        except _BadMessage as err:
            raise self._protocol_error(f"it answered readFile {path} {err}") from err

    def write_file(self, path: str, data: bytes) -> None:
        self._request("writeFile", {"path": path, "data": _encode(data)})

    def stat(self, path: str) -> VmStat:
        result = self._request("stat", {"path": path})
        kind, size = result.get("type"), result.get("size", 0)
        if kind not in ("file", "directory", "other") or not isinstance(size, int):
            raise self._protocol_error(f"stat answer for {path} is not {{type, size}}: {json.dumps(result)[:200]}")
        return VmStat(kind, size)

    def list_dir(self, path: str) -> list[str]:
        entries = self._request("listDir", {"path": path}).get("entries")
        if not isinstance(entries, list) or not all(isinstance(e, str) for e in entries):
            raise self._protocol_error(f"listDir answer for {path} has no list of entry names")
        return entries

    def mkdir(self, path: str) -> None:
        self._request("mkdir", {"path": path, "recursive": True})

    def access(self, path: str) -> None:
        self._request("access", {"path": path})

    # --- the wire ----------------------------------------------------------------------------------------

    def _request(self, op: str, params: dict[str, Any], timeout: float | None = None) -> dict[str, Any]:
        call = _Call()
        return self._wait(self._send(op, params, call), call, timeout)

    def _send(self, op: str, params: dict[str, Any], call: _Call) -> int:
        with self._lock:
            if self._failure is not None:
                raise self._failure
            self._next_id += 1
            call_id = self._next_id
            self._calls[call_id] = call
            line = json.dumps({"id": call_id, "op": op, **params}) + "\n"
            try:
                assert self._proc.stdin is not None
                self._proc.stdin.write(line.encode("utf-8"))
                self._proc.stdin.flush()
            except OSError:
                del self._calls[call_id]
                failure = self._exit_error()
                self._failure = failure
                raise failure from None
        return call_id

    def _notify_signal(self, target: int) -> None:
        try:
            self._send("signal", {"target": target}, _Call())
        except GondolinError:
            pass  # the bridge is gone, so the exec fails on its own

    def _wait(self, call_id: int, call: _Call, timeout: float | None,
              stopped: threading.Event | None = None) -> dict[str, Any]:
        try:
            if stopped is None:
                message = call.inbox.get(timeout=timeout)
            else:
                while True:
                    try:
                        message = call.inbox.get(timeout=0.2)
                        break
                    except queue.Empty:
                        if stopped.is_set():
                            timeout = CLOSE_TIMEOUT
                            message = call.inbox.get(timeout=timeout)
                            break
        except queue.Empty:
            raise GondolinError(f"Gondolin bridge did not answer within {timeout:g}s") from None
        finally:
            with self._lock:
                self._calls.pop(call_id, None)
        if isinstance(message, GondolinError):
            raise message
        if message.get("ok") is True:
            result = message.get("result", {})
            if not isinstance(result, dict):
                raise self._protocol_error("an answer's result is not an object")
            return result
        raise _guest_error(message.get("error"))

    def _read_stdout(self) -> None:
        assert self._proc.stdout is not None
        for raw in self._proc.stdout:
            if not raw.strip():
                continue
            try:
                try:
                    message = json.loads(raw)
                except ValueError:
                    raise _BadMessage("which is not JSON") from None
                if not isinstance(message, dict) or not isinstance(message.get("id"), int):
                    raise _BadMessage("which is not an object with an integer id")
                self._route(message)
            except _BadMessage as err:
                text = raw.decode("utf-8", "replace").strip()
                self._fail(self._protocol_error(f"it sent {text[:200]!r}, {err}"))
                self._proc.kill()
                return
        self._proc.wait()
        self._fail(GondolinError("Gondolin VM is closed") if self._closing else self._exit_error())

    def _route(self, message: dict[str, Any]) -> None:
        with self._lock:
            call = self._calls.get(message["id"])
        if call is None:
            return  # an answer to a request pi stopped waiting for
        stream = message.get("stream")
        if stream is None:
            call.inbox.put(message)
            return
        if stream not in call.streams:
            raise _BadMessage(f"which names an unknown stream {stream!r}")
        on_data = call.streams[stream]
        chunk = _decode(message.get("data"))
        if on_data is not None:
            on_data(chunk)

    def _read_stderr(self) -> None:
        assert self._proc.stderr is not None
        for raw in self._proc.stderr:
            self._stderr.append(raw.decode("utf-8", "replace").rstrip())

    def _fail(self, failure: GondolinError) -> None:
        """Every waiting call (and every later one) fails with ``failure``; the first failure is kept."""
        with self._lock:
            self._failure = self._failure or failure
            calls, self._calls = list(self._calls.values()), {}
        for call in calls:
            call.inbox.put(self._failure)

    def _shut_stdin(self) -> None:
        try:
            if self._proc.stdin is not None:
                self._proc.stdin.close()
        except OSError:
            pass

    def _exit_error(self) -> GondolinError:
        try:
            code = self._proc.wait(1.0)
        except subprocess.TimeoutExpired:
            return GondolinError(f"Gondolin bridge {self.argv[0]!r} stopped reading its input{self._stderr_tail()}")
        return GondolinError(f"Gondolin bridge {self.argv[0]!r} exited with code {code}{self._stderr_tail()}")

    def _protocol_error(self, what: str) -> GondolinError:
        # The npm package's own CLI is also called gondolin and prints its usage: say what pi expected instead.
        hint = "" if self.id else (" (is it a pi bridge? The Gondolin CLI itself is not one; see --gondolin-bridge "
                                   f"or {BRIDGE_ENV})")
        return GondolinError(f"Gondolin bridge {self.argv[0]!r} broke the JSON-lines protocol: {what}{hint}"
                             f"{self._stderr_tail()}")

    def _stderr_tail(self) -> str:
        if self._proc.poll() is not None:
            self._stderr_reader.join(1.0)  # the last words of a bridge that died
        lines = [line for line in self._stderr if line]
        return ": " + " | ".join(lines[-3:]) if lines else ""


def _guest_error(error: Any) -> Exception:
    """A failed answer as the exception a tool expects: OSError with errno for a known code, else GondolinError."""
    if not isinstance(error, dict):
        return GondolinError("Gondolin bridge reported a failure without an error object")
    code, message = error.get("code"), str(error.get("message") or error.get("code") or "unknown error")
    number = getattr(errno, code, None) if isinstance(code, str) and code.startswith("E") else None
    if isinstance(number, int):
        return OSError(number, os.strerror(number), error.get("path"))
    return GondolinError(f"Gondolin VM: {message}")
