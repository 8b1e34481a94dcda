"""One attempt at one task: a working copy, a ``pi --mode rpc`` process driven to the end of its run, and an
``Outcome``. The same code runs in a local worker thread and inside a Ray task."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, cast

from pi_plugins.batch.tasks import TaskSpec

from pi_core.sessions.usage import UsageTotals

if TYPE_CHECKING:
    from pi_core.modes.rpc.client import RpcClient

STATUSES = ("ok", "error", "timeout", "cancelled")
_GRACE_S = 5.0  # after the run ends: time for pi to write its session and exit on its own
_STDERR_KEEP = 64 * 1024
_PROMPT_ID = "pi-batch-prompt"


@dataclass(frozen=True)
class RunSettings:
    """What every task of a run shares."""

    run_id: str
    pi_options: tuple[str, ...] = ()  # pi's options for every session: plugins, settings, default model
    workdir: str = "."  # where repo and bare tasks get their working copies
    env: tuple[tuple[str, str], ...] = ()  # extra environment for every pi
    command: tuple[str, ...] = ()  # how to start pi (default: this interpreter, see reaper.pi_command)


@dataclass
class Usage(UsageTotals):
    def to_json(self) -> dict[str, int]:
        return {"input": self.input, "output": self.output, "cacheRead": self.cache_read,
                "cacheWrite": self.cache_write, "totalTokens": self.tokens}


@dataclass
class Outcome:
    """How one attempt ended. ``lost``: the worker died under the task (not a result: retry it)."""

    status: str
    error: str | None = None
    answer: str | None = None
    usage: Usage = field(default_factory=Usage)
    turns: int = 0
    duration_s: float = 0.0
    model: str | None = None
    workspace: str | None = None
    session_jsonl: str | None = None
    lost: bool = False


@dataclass(frozen=True)
class Progress:
    """A running task's counters, reported as its session goes (turns, tokens, cost so far)."""

    task_id: str
    attempt: int
    turns: int
    tokens: int
    cost: float


Report = Callable[[Progress], None]


class _Watch:
    """Reads the session's events: turns, usage, the answer, and when the run is over."""

    def __init__(self, task: TaskSpec, attempt: int, report: Report | None) -> None:
        self.task, self.attempt, self.report = task, attempt, report
        self.usage = Usage()
        self.turns = 0
        self.answer: str | None = None
        self.stop_reason: str | None = None
        self.error: str | None = None
        self.model: str | None = None
        self.ended = threading.Event()
        self.turn_limit = False

    def on_event(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        message = event.get("message")
        if kind == "message_end" and isinstance(message, dict) and message.get("role") == "assistant":
            limit = self.task.max_turns
            if limit is not None and self.turns >= limit and message.get("stopReason") == "aborted":
                self.turn_limit = True  # turn_limit.py stopped the run: this reply was never requested
                return
            self.turns += 1
            self.usage.add_json(message.get("usage"))
            self.stop_reason = message.get("stopReason")
            self.error = message.get("errorMessage") if self.stop_reason == "error" else None
            text = "".join(block.get("text", "") for block in message.get("content") or []
                           if isinstance(block, dict) and block.get("type") == "text")
            self.answer = text or self.answer
            self.model = f"{message.get('provider')}/{message.get('model')}"
            if self.report is not None:
                self.report(Progress(self.task.id, self.attempt, self.turns, self.usage.tokens, self.usage.cost))
        elif kind == "agent_end":
            self.ended.set()


def run_task(task: TaskSpec, settings: RunSettings, attempt: int = 1, *, cancel: threading.Event | None = None,
             report: Report | None = None) -> Outcome:
    """Run ``task`` once. Never raises for anything the task did; ``KeyboardInterrupt`` (Ray's cancel)
    stops it like ``cancel``."""
    from pi_plugins.batch.reaper import MARKER, RUN_MARKER
    from pi_plugins.batch.scratch import attempt_dir, remove_attempt_dir
    from pi_plugins.batch.workspace import WorkspaceError, prepare

    started = time.monotonic()
    marker = f"{settings.run_id}/{task.slug}/{attempt}"
    # Every process of the attempt carries the markers, git included, so a reaper can find what survives.
    env = {**os.environ, **dict(settings.env), MARKER: marker, RUN_MARKER: settings.run_id}
    try:
        workspace = prepare(task, Path(settings.workdir), env=env)
    except (WorkspaceError, OSError) as err:
        return Outcome("error", error=f"working copy: {err}", duration_s=time.monotonic() - started)
    try:
        scratch = attempt_dir(Path(settings.workdir), settings.run_id, task.slug, attempt)
    except OSError as err:
        return Outcome("error", error=f"session folder: {err.strerror or err}", duration_s=time.monotonic() - started)
    try:
        outcome = _drive(task, settings, attempt, env, workspace, scratch, started, cancel, report)
        sessions = sorted(scratch.glob("*.jsonl"))
        if sessions:
            outcome.session_jsonl = sessions[-1].read_text(encoding="utf-8", errors="replace")
        outcome.workspace = str(workspace)
        outcome.duration_s = time.monotonic() - started
        return outcome
    finally:
        remove_attempt_dir(scratch)


def pi_argv(task: TaskSpec, settings: RunSettings, scratch: Path) -> list[str]:
    from pi_plugins.batch import turn_limit
    from pi_plugins.batch.reaper import pi_command

    argv = [*(settings.command or pi_command()), "--mode", "rpc", *settings.pi_options]
    if task.max_turns is not None:
        argv += ["-e", turn_limit.__file__, f"--{turn_limit.FLAG}={task.max_turns}"]
    if "--no-session" not in settings.pi_options:
        argv += ["--session-dir", str(scratch)]
    for flag, value in (("--provider", task.provider), ("--model", task.model), ("--thinking", task.thinking),
                        ("--append-system-prompt", task.append_system_prompt)):
        if value is not None:
            argv += [flag, value]
    if task.tools is not None:
        argv += ["--tools", ",".join(task.tools)] if task.tools else ["--no-tools"]
    return argv


def _drive(task: TaskSpec, settings: RunSettings, attempt: int, env: dict[str, str], workspace: Path,
           scratch: Path, started: float, cancel: threading.Event | None, report: Report | None) -> Outcome:
    from pi_plugins.batch.reaper import MARKER, kill_tree, spawn

    from pi_core.modes.rpc.client import RpcClient, RpcTimeout
    from pi_core.modes.rpc.framing import serialize_json_line

    marker = env[MARKER]
    try:
        process = spawn(pi_argv(task, settings, scratch), cwd=str(workspace), env=env)
    except OSError as err:
        return Outcome("error", error=f"could not start pi: {err.strerror or err}")
    stderr = _Tail(process)
    watch = _Watch(task, attempt, report)
    assert process.stdin is not None and process.stdout is not None
    client = RpcClient.connect(cast(BinaryIO, process.stdin), cast(BinaryIO, process.stdout), history=64)
    client.on_event(watch.on_event)
    deadline = started + task.timeout_s if task.timeout_s is not None else None
    killed = False
    try:
        client.send_raw(serialize_json_line({"type": "prompt", "id": _PROMPT_ID, "message": task.prompt}))
        while not watch.ended.wait(0.05):
            if cancel is not None and cancel.is_set():
                kill_tree(process, marker)
                killed = True
                return _partial(watch, "cancelled", "cancelled before the task finished")
            if deadline is not None and time.monotonic() >= deadline:
                kill_tree(process, marker)
                killed = True
                return _partial(watch, "timeout", f"timed out after {task.timeout_s:g}s")
            refused = next((r for r in client.responses if r.get("id") == _PROMPT_ID and not r.get("success")), None)
            if refused is not None:
                return _partial(watch, "error", f"pi refused the prompt: {refused.get('error')}")
            code = process.poll()
            if code is not None:
                try:
                    client.wait_closed(_GRACE_S)  # its last lines may still be in the pipe
                except RpcTimeout:
                    pass  # a leftover child holds the pipe open: judge by what arrived
                if watch.ended.is_set():
                    break
                return _died(watch, code, stderr.text())
        return _finished(watch, task)
    except KeyboardInterrupt:  # Ray's ray.cancel(): stop like a cancel
        kill_tree(process, marker)
        killed = True
        return _partial(watch, "cancelled", "cancelled before the task finished")
    except Exception as err:  # noqa: BLE001 - the pipe broke: pi is gone, and that is the task's result
        code = process.poll()
        if code is not None:
            return _died(watch, code, stderr.text())
        reason = err.strerror if isinstance(err, OSError) and err.strerror else type(err).__name__
        return _partial(watch, "error", f"lost contact with pi ({reason}) before the task finished")
    finally:
        if not killed:
            _close(client, process)
        kill_tree(process, marker)
        stderr.join()


def _close(client: RpcClient, process: subprocess.Popen[bytes]) -> None:
    """Let pi exit on its own (EOF on stdin), so its session file is complete."""
    try:
        client.close_stdin()
    except OSError:
        pass  # already gone
    try:
        process.wait(_GRACE_S)
    except subprocess.TimeoutExpired:
        return  # kill_tree follows


def _finished(watch: _Watch, task: TaskSpec) -> Outcome:
    if watch.stop_reason == "error":
        return _partial(watch, "error", watch.error or "the provider reported an error")
    if watch.turn_limit:
        return _partial(watch, "error", f"stopped at max_turns ({task.max_turns})")
    if watch.stop_reason == "aborted":
        return _partial(watch, "error", "the run was aborted")
    return _partial(watch, "ok", None)


def _partial(watch: _Watch, status: str, error: str | None) -> Outcome:
    return Outcome(status, error=error, answer=watch.answer, usage=watch.usage, turns=watch.turns, model=watch.model)


def _died(watch: _Watch, code: int, stderr: str) -> Outcome:
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        outcome = _partial(watch, "error", f"pi was killed by {name} before the task finished")
        outcome.lost = True
        return outcome
    lines = [line for line in stderr.splitlines() if line.strip()]
    detail = lines[-1] if lines else "no error output"
    return _partial(watch, "error", f"pi exited with code {code} before the task finished: {detail}")


class _Tail:
    """Drains pi's stderr on a thread, keeping the last 64 KiB for error messages."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self._chunks: list[bytes] = []
        self._size = 0
        self._thread = threading.Thread(target=self._read, args=(process.stderr,), daemon=True,
                                        name="pi-batch-stderr")
        self._thread.start()

    def _read(self, stream: io.BufferedReader) -> None:
        while chunk := stream.read1(65536):
            self._chunks.append(chunk)
            self._size += len(chunk)
            while self._size > _STDERR_KEEP and len(self._chunks) > 1:
                self._size -= len(self._chunks.pop(0))

    def text(self) -> str:
        time.sleep(0.05)  # the last lines arrive just after the exit
        return b"".join(self._chunks).decode("utf-8", errors="replace")

    def join(self) -> None:
        self._thread.join(2)
