"""RpcClient: spawn ``pi --mode rpc`` and talk to it from Python (editor integrations, scripts, tests).

    with RpcClient(["--provider", "anthropic", "--model", "claude-sonnet-4-5", "--no-session"]) as pi:
        events = pi.prompt_and_wait("List the files")
        print(pi.get_last_assistant_text())

Responses are matched to requests by ``id`` (the client numbers them); events and extension UI
requests are kept in arrival order and can be waited for. Everything is thread-based and blocking,
so it works from any program without an event loop.
"""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
import threading
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, BinaryIO, Self

from pi_core.modes.rpc.framing import JsonlSplitter, serialize_json_line
from pi_core.sessions.jsonfmt import js_loads

DEFAULT_TIMEOUT = 60.0
# RPC lines are JSON objects from pi's stdout; their fields are open (docs/rpc.md names them), hence Any.
JsonObject = dict[str, Any]  # open: an RPC command, response or event, JSON (docs/rpc.md)
EventPredicate = Callable[[JsonObject], bool]


class RpcError(Exception):
    """A command answered ``success:false``; ``response`` is the whole response object."""

    def __init__(self, response: JsonObject) -> None:
        super().__init__(f"{response.get('command')}: {response.get('error')}")
        self.response = response


class RpcTimeout(Exception):
    """No answer within the timeout; carries what pi wrote to stderr so far."""


class RpcClosed(Exception):
    """pi's input is closed (it exited, or ``close_stdin`` was called): nothing more can be sent."""


def default_command() -> list[str]:
    """``pi`` next to this Python (the venv's console script), else ``python -c`` on the CLI."""
    script = Path(sys.executable).with_name("pi")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", "from pi_core.app.cli import cli; cli()"]


class RpcClient:
    def __init__(self, args: list[str] | tuple[str, ...] = (), *, command: list[str] | None = None,
                 cwd: str | Path | None = None, env: dict[str, str] | None = None,
                 provider: str | None = None, model: str | None = None, history: int | None = None) -> None:
        """``history``: keep at most this many events, responses and received lines (oldest dropped),
        for long-running clients; event indices (``event_count``, ``after=``) stay valid regardless."""
        extra = list(args)
        if provider:
            extra += ["--provider", provider]
        if model:
            extra += ["--model", model]
        self.argv = [*(command or default_command()), "--mode", "rpc", *extra]
        self.cwd = str(cwd) if cwd is not None else None
        self.env = {**os.environ, **(env or {})}
        self.process: subprocess.Popen[bytes] | None = None
        self._in: IO[bytes] | None = None
        self.history = history
        self.events: list[dict[str, Any]] = []  # every non-response line, in order
        self._dropped_events = 0  # events trimmed off the front by ``history``
        self.responses: list[dict[str, Any]] = []
        self.received: list[dict[str, Any]] = []  # responses and events interleaved, as they arrived
        self.unparsed: list[str] = []  # stdout lines that were not JSON (must stay empty)
        self._stderr: list[bytes] = []
        self._cond = threading.Condition()
        self._pending: dict[str, dict[str, Any] | None] = {}
        self._pending_types: dict[str, str] = {}
        self._ids = itertools.count(1)
        self._listeners: list[Callable[[dict[str, Any]], None]] = []
        self._write_lock = threading.Lock()
        self._stdout_closed = False
        self._threads: list[threading.Thread] = []

    # --- lifecycle --------------------------------------------------------------------------------

    def start(self) -> Self:
        if self.process is not None or self._in is not None:
            raise RuntimeError("RpcClient already started")
        self.process = subprocess.Popen(self.argv, cwd=self.cwd, env=self.env, stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self._in = self.process.stdin
        self._spawn_reader(self._read_stdout, self.process.stdout, "stdout")
        self._spawn_reader(self._read_stderr, self.process.stderr, "stderr")
        return self

    @classmethod
    def connect(cls, to_pi: BinaryIO, from_pi: BinaryIO, *, history: int | None = None) -> Self:
        """A client over existing streams (an in-process ``run_rpc_mode``, a socket, an SSH channel)."""
        client = cls(history=history)
        client._in = to_pi
        client._spawn_reader(client._read_stdout, from_pi, "stdout")
        return client

    def _spawn_reader(self, target: Callable[[Any], None], stream: Any, name: str) -> None:
        thread = threading.Thread(target=target, args=(stream,), name=f"rpc-client-{name}", daemon=True)
        thread.start()
        self._threads.append(thread)

    def __enter__(self) -> Self:
        return self.start() if self.process is None and self._in is None else self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def close_stdin(self) -> None:
        """Signal EOF: pi aborts any run, records it and exits."""
        assert self._in is not None, "RpcClient not started"
        with self._write_lock:
            if not self._in.closed:
                self._in.close()

    def wait_closed(self, timeout: float = DEFAULT_TIMEOUT) -> None:
        """Wait until pi closes its end of the output stream."""
        with self._cond:
            if not self._cond.wait_for(lambda: self._stdout_closed, timeout):
                raise RpcTimeout(f"pi kept its output open for {timeout}s; stderr:\n{self.stderr}")

    def wait(self, timeout: float | None = DEFAULT_TIMEOUT) -> int:
        """Wait for the process to exit and for its output to be read; returns the exit code."""
        assert self.process is not None
        try:
            code = self.process.wait(timeout)
        except subprocess.TimeoutExpired as err:
            raise RpcTimeout(f"pi did not exit within {timeout}s; stderr:\n{self.stderr}") from err
        for thread in self._threads:
            thread.join(timeout)
        return code

    def stop(self, timeout: float = 10.0) -> int | None:
        """Close stdin and wait; terminate, then kill, if pi does not exit."""
        if self.process is None:
            if self._in is not None and not self._in.closed:
                self.close_stdin()
            return None
        if self.process.poll() is None:
            try:
                self.close_stdin()
            except BrokenPipeError:
                pass  # already gone: nothing to tell it
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.terminate()
                try:
                    self.process.wait(timeout)
                except subprocess.TimeoutExpired:
                    self.process.kill()
                    self.process.wait()
        return self.process.returncode

    @property
    def stderr(self) -> str:
        return b"".join(self._stderr).decode("utf-8", errors="replace")

    # --- reading ----------------------------------------------------------------------------------

    def _read_stdout(self, stream: Any) -> None:
        splitter = JsonlSplitter()
        while True:
            chunk = stream.read1(65536)
            if not chunk:
                break
            for line in splitter.feed(chunk):
                self._handle_line(line)
        for line in splitter.finish():
            self._handle_line(line)
        with self._cond:
            self._stdout_closed = True
            self._cond.notify_all()

    def _read_stderr(self, stream: Any) -> None:
        while True:
            chunk = stream.read1(65536)
            if not chunk:
                return
            self._stderr.append(chunk)

    def _handle_line(self, line: str) -> None:
        try:
            message = js_loads(line)
        except ValueError:
            with self._cond:
                self.unparsed.append(line)
            return
        with self._cond:
            self.received.append(message)
            if isinstance(message, dict) and message.get("type") == "response":
                self.responses.append(message)
                request_id = message.get("id")
                if request_id is None:
                    # Pi drops the id of an unknown command's error: match it by command name.
                    request_id = next((rid for rid, kind in self._pending_types.items()
                                       if kind == message.get("command") and self._pending.get(rid) is None), None)
                if request_id in self._pending:
                    self._pending[request_id] = message
            else:
                self.events.append(message)
            if self.history is not None:
                self._trim(self.history)
            self._cond.notify_all()
        if not (isinstance(message, dict) and message.get("type") == "response"):
            for listener in list(self._listeners):
                try:
                    listener(message)
                except Exception:  # noqa: BLE001 - a broken listener must not stop the reader thread
                    traceback.print_exc(file=sys.stderr)

    def _trim(self, keep: int) -> None:
        excess = len(self.events) - keep
        if excess > 0:
            del self.events[:excess]
            self._dropped_events += excess
        del self.responses[: max(0, len(self.responses) - keep)]
        del self.received[: max(0, len(self.received) - keep)]

    def on_event(self, listener: Callable[[JsonObject], None]) -> Callable[[], None]:
        """Call ``listener`` (on the reader thread) for each event and UI request; returns unsubscribe."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def wait_for_event(self, match: str | EventPredicate, *, after: int = 0,
                       timeout: float = DEFAULT_TIMEOUT) -> JsonObject:
        """The first event at index >= ``after`` (counting every event ever received) with that type,
        or matching the predicate."""
        predicate = (lambda e: e.get("type") == match) if isinstance(match, str) else match
        with self._cond:
            def found() -> dict[str, Any] | None:
                start = max(0, after - self._dropped_events)
                return next((e for e in self.events[start:] if predicate(e)), None)

            if not self._cond.wait_for(lambda: found() is not None or self._stdout_closed, timeout):
                raise RpcTimeout(f"no event {match!r} within {timeout}s; stderr:\n{self.stderr}")
            event = found()
            if event is None:
                raise RpcTimeout(f"pi closed stdout before event {match!r}; stderr:\n{self.stderr}")
            return event

    def event_count(self) -> int:
        """How many events have arrived so far (an index for ``wait_for_event(after=...)``)."""
        with self._cond:
            return self._dropped_events + len(self.events)

    # --- writing ----------------------------------------------------------------------------------

    def send_raw(self, data: str | bytes) -> None:
        """Write bytes as they are (for framing tests: CRLF, partial lines, malformed JSON)."""
        assert self._in is not None, "RpcClient not started"
        with self._write_lock:
            try:
                self._in.write(data.encode("utf-8") if isinstance(data, str) else data)
                self._in.flush()
            except (BrokenPipeError, ValueError) as err:  # ValueError: we closed it ourselves
                raise RpcClosed(f"cannot write to pi: {err}; stderr:\n{self.stderr}") from err

    def send(self, command: JsonObject, *, timeout: float = DEFAULT_TIMEOUT) -> JsonObject:
        """Send a command (an ``id`` is added if missing) and return its response, success or not."""
        command = dict(command)
        request_id = str(command.setdefault("id", f"req-{next(self._ids)}"))
        with self._cond:
            self._pending[request_id] = None
            self._pending_types[request_id] = str(command.get("type"))
        try:
            self.send_raw(serialize_json_line(command))
            with self._cond:
                if not self._cond.wait_for(lambda: self._pending[request_id] is not None or self._stdout_closed,
                                           timeout):
                    raise RpcTimeout(f"no response to {command.get('type')} within {timeout}s; "
                                     f"stderr:\n{self.stderr}")
                response = self._pending[request_id]
                if response is None:
                    raise RpcTimeout(f"pi closed stdout before answering {command.get('type')}; "
                                     f"stderr:\n{self.stderr}")
                return response
        finally:
            with self._cond:
                self._pending.pop(request_id, None)
                self._pending_types.pop(request_id, None)

    def request(self, kind: str, *, timeout: float = DEFAULT_TIMEOUT, **params: Any) -> Any:  # open: the command's JSON fields and its response data
        """Send ``{"type": kind, **params}`` (None values dropped); return ``data`` or raise RpcError."""
        response = self.send({"type": kind, **{k: v for k, v in params.items() if v is not None}}, timeout=timeout)
        if not response.get("success"):
            raise RpcError(response)
        return response.get("data")

    def _object(self, kind: str, *, timeout: float = DEFAULT_TIMEOUT, **params: Any) -> JsonObject:
        """``request`` for a command whose ``data`` is an object; RpcError when pi answered otherwise."""
        data = self._optional_object(kind, timeout=timeout, **params)
        if data is None:
            raise RpcError({"command": kind, "error": "the response carries no data"})
        return data

    def _optional_object(self, kind: str, *, timeout: float = DEFAULT_TIMEOUT, **params: Any) -> JsonObject | None:
        data = self.request(kind, timeout=timeout, **params)
        if data is not None and not isinstance(data, dict):
            raise RpcError({"command": kind, "error": f"data is a {type(data).__name__}, not an object"})
        return data

    def _list(self, kind: str, key: str) -> list[JsonObject]:
        items = self._object(kind).get(key)
        if not isinstance(items, list):
            raise RpcError({"command": kind, "error": f"data.{key} is not a list"})
        return items

    # --- prompting --------------------------------------------------------------------------------

    def prompt(self, message: str, images: list[JsonObject] | None = None,
               streaming_behavior: str | None = None) -> None:
        self.request("prompt", message=message, images=images, streamingBehavior=streaming_behavior)

    def prompt_and_wait(self, message: str, images: list[JsonObject] | None = None, *,
                        timeout: float = DEFAULT_TIMEOUT) -> list[JsonObject]:
        """Prompt and collect every event up to and including ``agent_end`` (with ``history`` set, only
        those still kept)."""
        start = self.event_count()
        self.prompt(message, images)
        end = self.wait_for_event("agent_end", after=start, timeout=timeout)
        with self._cond:
            first = max(0, start - self._dropped_events)
            return self.events[first : self.events.index(end, first) + 1]

    def steer(self, message: str, images: list[JsonObject] | None = None) -> None:
        self.request("steer", message=message, images=images)

    def follow_up(self, message: str, images: list[JsonObject] | None = None) -> None:
        self.request("follow_up", message=message, images=images)

    def abort(self) -> None:
        self.request("abort")

    # --- state, models, thinking ------------------------------------------------------------------

    def get_state(self) -> JsonObject:
        return self._object("get_state")

    def get_messages(self) -> list[JsonObject]:
        return self._list("get_messages", "messages")

    def set_model(self, provider: str, model_id: str) -> JsonObject:
        return self._object("set_model", provider=provider, modelId=model_id)

    def cycle_model(self) -> JsonObject | None:
        return self._optional_object("cycle_model")

    def get_available_models(self) -> list[JsonObject]:
        return self._list("get_available_models", "models")

    def set_thinking_level(self, level: str) -> None:
        self.request("set_thinking_level", level=level)

    def cycle_thinking_level(self) -> JsonObject | None:
        return self._optional_object("cycle_thinking_level")

    def set_steering_mode(self, mode: str) -> None:
        self.request("set_steering_mode", mode=mode)

    def set_follow_up_mode(self, mode: str) -> None:
        self.request("set_follow_up_mode", mode=mode)

    # --- compaction, retry, bash ------------------------------------------------------------------

    def compact(self, custom_instructions: str | None = None) -> JsonObject:
        return self._object("compact", customInstructions=custom_instructions)

    def set_auto_compaction(self, enabled: bool) -> None:
        self.request("set_auto_compaction", enabled=enabled)

    def set_auto_retry(self, enabled: bool) -> None:
        self.request("set_auto_retry", enabled=enabled)

    def abort_retry(self) -> None:
        self.request("abort_retry")

    def bash(self, command: str, *, timeout: float = DEFAULT_TIMEOUT) -> JsonObject:
        return self._object("bash", command=command, timeout=timeout)

    def abort_bash(self) -> None:
        self.request("abort_bash")

    # --- sessions ---------------------------------------------------------------------------------

    def new_session(self, parent_session: str | None = None) -> JsonObject:
        return self._object("new_session", parentSession=parent_session)

    def switch_session(self, session_path: str) -> JsonObject:
        return self._object("switch_session", sessionPath=session_path)

    def fork(self, entry_id: str) -> JsonObject:
        return self._object("fork", entryId=entry_id)

    def clone(self) -> JsonObject:
        return self._object("clone")

    def get_fork_messages(self) -> list[dict[str, str]]:
        return self._list("get_fork_messages", "messages")

    def get_last_assistant_text(self) -> str | None:
        return (self.request("get_last_assistant_text") or {}).get("text")

    def set_session_name(self, name: str) -> None:
        self.request("set_session_name", name=name)

    def get_session_stats(self) -> JsonObject:
        return self._object("get_session_stats")

    def export_html(self, output_path: str | None = None) -> str:
        return str(self._object("export_html", outputPath=output_path)["path"])

    def get_commands(self) -> list[JsonObject]:
        return self._list("get_commands", "commands")

    # --- extension UI -----------------------------------------------------------------------------

    def respond_ui(self, request_id: str, **answer: Any) -> None:  # open: the dialog answer's JSON fields
        """Answer a dialog: ``value=...`` (select/input/editor), ``confirmed=...`` or ``cancelled=True``."""
        self.send_raw(serialize_json_line({"type": "extension_ui_response", "id": request_id, **answer}))
