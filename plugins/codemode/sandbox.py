"""Running one script: a worker process (``worker.py``, QuickJS) per script, at most ``PI_CODEMODE_MAX_WORKERS``
(2) alive in this pi process, answered on pi's event loop. Calls the script makes run concurrently as tasks; the
script's deadline, an abort or the end of the script kills the worker, so a script that loops forever costs
nothing once its time is up and pi stays responsive throughout."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import os
import sys
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pi_plugins.codemode.output import Item

from pi_core.signals import AbortSignal
from pi_core.types import encodable_value

MEMORY_LIMIT_BYTES = 256 * 1024 * 1024
DEFAULT_MAX_WORKERS = 2
WORKER_WAIT_S = 60.0
LINE_LIMIT = 64 * 1024 * 1024  # one message holds at most the 16M characters of output a script may make
WORKER = Path(__file__).with_name("worker.py")

# A call from the script: its arguments (parsed JSON, or None) and a signal that fires when the script ends.
Executor = Callable[[Any, AbortSignal], Awaitable[Any]]


@functools.cache
def binding_dir() -> str:
    """The folder of quickjs-ng's C module, which the worker imports without running site."""
    import importlib.util

    spec = importlib.util.find_spec("_quickjs")
    if spec is None or spec.origin is None:
        raise OSError("the quickjs-ng package is not installed (pip install quickjs-ng)")
    return str(Path(spec.origin).parent)


def max_workers() -> int:
    raw = os.environ.get("PI_CODEMODE_MAX_WORKERS", "")
    return int(raw) if raw.isdigit() and int(raw) > 0 else DEFAULT_MAX_WORKERS


class WorkerSlots:
    """The process-wide cap on live workers; waiters are admitted in arrival order."""

    def __init__(self) -> None:
        self.active = 0
        self.waiting: deque[asyncio.Future[None]] = deque()

    def _admit(self) -> None:
        while self.waiting and self.active < max_workers():
            waiter = self.waiting.popleft()
            if not waiter.done():
                self.active += 1
                waiter.set_result(None)

    async def acquire(self, timeout_s: float, signal: AbortSignal) -> Literal["reserved", "timeout", "aborted"]:
        if signal.aborted:
            return "aborted"
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.waiting.append(waiter)
        self._admit()
        if waiter.done():
            return "reserved"
        aborted = asyncio.ensure_future(signal.wait())
        try:
            await asyncio.wait([waiter, aborted], timeout=timeout_s, return_when=asyncio.FIRST_COMPLETED)
        finally:
            aborted.cancel()
        if waiter.done():
            return "reserved"
        waiter.cancel()
        with contextlib.suppress(ValueError):
            self.waiting.remove(waiter)
        return "aborted" if signal.aborted else "timeout"

    def release(self) -> None:
        self.active -= 1
        self._admit()


SLOTS = WorkerSlots()


@dataclass
class ScriptError:
    kind: Literal["script", "timeout", "aborted", "sandbox"]
    message: str
    name: str | None = None
    stack: str | None = None

    def text(self) -> str:
        if self.kind == "script":
            return self.stack or f"{self.name or 'Error'}: {self.message}"
        prefix = {"timeout": "Script timed out", "aborted": "Script aborted", "sandbox": "Script sandbox failed"}
        return f"{prefix[self.kind]}: {self.message}"


@dataclass
class Outcome:
    output: list[Item] = field(default_factory=list)
    error: ScriptError | None = None
    value_json: str | None = None  # the script's return value as JSON.stringify wrote it; None: nothing returned
    writes: list[list[Any]] = field(default_factory=list)  # [[key, json]] sets and [[key]] deletions


@dataclass
class Job:
    code: str
    tools: list[dict[str, str]]  # name, jsName, description
    globals: list[dict[str, Any]]  # name, spread
    store: dict[str, str]  # key -> JSON text
    executors: dict[tuple[str, str], Executor]  # ("tool" | "global", name)


class _Run:
    def __init__(self, job: Job, proc: asyncio.subprocess.Process) -> None:
        self.job, self.proc = job, proc
        self.outcome = Outcome()
        self.calls: set[asyncio.Task[None]] = set()
        self.call_signal = AbortSignal()
        self.write_lock = asyncio.Lock()

    async def send(self, message: dict[str, Any]) -> None:
        stdin = self.proc.stdin
        assert stdin is not None
        async with self.write_lock:
            stdin.write((json.dumps(message, ensure_ascii=False) + "\n").encode("utf-8", "surrogatepass"))
            with contextlib.suppress(ConnectionError):
                await stdin.drain()

    async def answer(self, call_id: int, executor: Executor | None, name: str, args_json: str | None) -> None:
        try:
            if executor is None:
                raise RuntimeError(f'Unknown global "{name}"')
            # Lone surrogates become U+FFFD, as in arguments the model sends (no file name or command can hold one).
            args = None if args_json is None else encodable_value(json.loads(args_json))
            value = await executor(args, self.call_signal)
            reply = {"id": call_id, "ok": True, "payload": None if value is None else json.dumps(value)}
        except asyncio.CancelledError:
            raise
        except Exception as err:  # noqa: BLE001 - a failed call rejects the script's promise with its text
            reply = {"id": call_id, "ok": False, "payload": str(err) or type(err).__name__}
        if self.outcome.error is None:
            await self.send(reply)

    async def drive(self) -> None:
        """Read the worker's messages until the script is done or the worker is gone."""
        stdout = self.proc.stdout
        assert stdout is not None
        await self.send({"code": self.job.code, "tools": self.job.tools, "globals": self.job.globals,
                         "store": self.job.store, "memory_limit": MEMORY_LIMIT_BYTES})
        while True:
            line = await stdout.readline()
            if not line:
                code = await self.proc.wait()
                self.outcome.error = ScriptError("sandbox", f"Worker exited with code {code} before the script settled")
                return
            message = json.loads(line)
            kind = message.get("t")
            if kind == "output":
                self.outcome.output.append(Item(message["kind"], message["data"], message.get("mimeType") or ""))
            elif kind == "call":
                executor = self.job.executors.get((message["target"], message["name"]))
                task = asyncio.create_task(self.answer(message["id"], executor, message["name"], message.get("args")))
                self.calls.add(task)
                task.add_done_callback(self.calls.discard)
            elif kind == "done":
                self._done(message)
                return
            elif kind == "crash":
                self.outcome.error = ScriptError("sandbox", str(message.get("message")))
                return

    def _done(self, message: dict[str, Any]) -> None:
        payload = message.get("payload")
        if not message.get("ok"):
            error = json.loads(payload) if isinstance(payload, str) else {}
            self.outcome.error = ScriptError("script", str(error.get("message", "")), error.get("name"),
                                             error.get("stack"))
            return
        self.outcome.value_json = payload if isinstance(payload, str) else None
        self.outcome.writes = json.loads(message.get("writes") or "[]")

    def stop(self) -> None:
        self.call_signal.abort("The script ended")
        for task in list(self.calls):
            task.cancel()
        if self.proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.kill()


async def _release_on_exit(proc: asyncio.subprocess.Process) -> None:
    try:
        await proc.wait()
    finally:
        SLOTS.release()


async def run_script(job: Job, timeout_ms: int | None, signal: AbortSignal) -> Outcome:
    """Run ``job`` in a new worker (a slot must be held: ``SLOTS.acquire``); the slot is released when the
    worker has exited."""
    try:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-I", "-S", str(WORKER), binding_dir(), stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL, limit=LINE_LIMIT,
            env={"PI_CODEMODE_PARENT": str(os.getpid())})  # nothing of pi's environment: no keys
    except OSError as err:
        SLOTS.release()
        return Outcome(error=ScriptError("sandbox", f"Failed to start worker: {err}"))
    reaper = asyncio.ensure_future(_release_on_exit(proc))
    run = _Run(job, proc)
    drive = asyncio.ensure_future(run.drive())
    aborted = asyncio.ensure_future(signal.wait())
    try:
        await asyncio.wait([drive, aborted], timeout=None if timeout_ms is None else timeout_ms / 1000, return_when=asyncio.FIRST_COMPLETED)
        if not drive.done():
            drive.cancel()
            if signal.aborted:
                run.outcome.error = ScriptError("aborted", signal.reason or "Execution aborted")
            else:
                run.outcome.error = ScriptError("timeout", f"Execution timed out after {timeout_ms} ms")
        elif drive.exception() is not None:
            run.outcome.error = ScriptError("sandbox", f"Sandbox host failed: {drive.exception()}")
    finally:
        aborted.cancel()
        run.stop()
    with contextlib.suppress(asyncio.TimeoutError):
        await asyncio.wait_for(asyncio.shield(reaper), 5)
    return run.outcome
