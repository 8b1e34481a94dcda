"""RpcMode: reads JSONL commands, runs each as its own task, writes responses and session events.

Commands are not serialized (docs/rpc.md#concurrency): a slow ``bash`` or ``compact`` never holds up ``abort`` or
``get_state``, so responses may come out of order and clients correlate them by ``id``.
"""

from __future__ import annotations

import asyncio
import sys
import traceback
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

from pi_core.control.session_control import SessionControl
from pi_core.errors import PiError
from pi_core.events import AgentEvent
from pi_core.modes.declaration import StreamDeclarer
from pi_core.modes.rpc.commands import COMMANDS, NO_DATA, RESPONDED, warn
from pi_core.modes.rpc.framing import JsonlSplitter
from pi_core.modes.rpc.ui import RpcUI
from pi_core.sessions.jsonfmt import js_loads

if TYPE_CHECKING:
    from pi_core.session import AgentSession, ModelSource
    from pi_core.types import ImageContent
    from pi_core.ui import Theme

Output = Callable[[dict[str, Any]], None]  # open: an RPC line, JSON (docs/rpc.md)
ChunkSource = Callable[[], Coroutine[object, object, bytes]]

# At EOF the process quits at once; this only bounds how long an aborted turn may take to unwind
# (so its aborted reply still reaches the session file) before we stop waiting.
SHUTDOWN_GRACE_SECONDS = 5.0

# The first events a run emits: a prompt that gets this far has been accepted.
ACCEPTING_EVENTS = frozenset({"agent_start", "compaction_start", "message_start"})


def _report_late_failure(task: asyncio.Task[Any]) -> None:
    """Failures after a prompt was accepted are the run's business (error events), not a second
    response; anything that still escapes is a bug worth a traceback on stderr."""
    if task.cancelled():
        return
    err = task.exception()
    if err is not None:
        warn("pi: prompt run failed after it was accepted:\n"
             + "".join(traceback.format_exception(type(err), err, err.__traceback__)))


class RpcMode:
    def __init__(self, session: AgentSession, output: Output, *, model_registry: ModelSource | None = None,
                 theme: Theme | None = None) -> None:
        self.session = session
        self.output = output
        self.loop = asyncio.get_running_loop()
        self.ui = RpcUI(output, self.loop, theme)
        self.ops = SessionControl(session, models=model_registry)
        self.exit_code = 0
        self.stopping = asyncio.Event()
        self.shutdown_requested = False
        self._run_task: asyncio.Task[Any] | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._prompt_gate = asyncio.Lock()
        self._on_accept: Callable[[], None] | None = None
        session.set_ui(self.ui, "rpc")  # plugins reach it as ctx.ui (tools: ctx.pi.ui)
        self.declarer = StreamDeclarer(session)
        self._unsubscribe = session.subscribe(self._on_session_event)
        session.on_shutdown_request(self.request_shutdown)

    # --- output -----------------------------------------------------------------------------------

    def _on_session_event(self, event: AgentEvent) -> None:
        accept = self._on_accept
        if accept is not None and event.type in ACCEPTING_EVENTS:
            self._on_accept = None
            accept()  # the prompt's success response goes out before its first run event
        for out in self.declarer.events(event):
            self.output(out.to_json())

    def respond(self, request_id: object, command: str, *, data: object = NO_DATA, error: str | None = None) -> None:
        response: dict[str, Any] = {}
        if request_id is not None:
            response["id"] = request_id
        response.update(type="response", command=command, success=error is None)
        if error is not None:
            response["error"] = error
        elif data is not NO_DATA:
            response["data"] = data
        self.output(response)

    # --- runs -------------------------------------------------------------------------------------

    async def submit_prompt(self, text: str, images: list[ImageContent] | None, behavior: str | None,
                            respond: Callable[[str], None]) -> None:
        """Hand the prompt to the session and call ``respond(disposition)`` once it is accepted: handled by
        a plugin command, queued, or the run is starting. A rejection before that raises (the error response)."""
        async with self._prompt_gate:  # one prompt at a time through preflight, so the next sees streaming
            busy = self.session.is_streaming
            if not busy:
                self.session.release_held_back()
            responded = False

            def accept(disposition: str) -> None:
                nonlocal responded
                if not responded:
                    responded = True
                    respond(disposition)

            started = asyncio.Event()
            if not busy:
                # While another run streams, its events say nothing about this prompt: then only the
                # outcome of session.prompt (queued, or refused) counts.
                def on_accept() -> None:
                    accept("started")
                    started.set()

                self._on_accept = on_accept
            task = self.loop.create_task(
                self.session.prompt(text, images, streaming_behavior=behavior, source="rpc"))
            waiter = self.loop.create_task(started.wait())
            try:
                await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                waiter.cancel()
                self._on_accept = None
            if task.done() and not responded:
                if task.cancelled():
                    raise PiError("Prompt was aborted before it started")
                accept(task.result())  # raises the rejection
                return
            self._run_task = task
            task.add_done_callback(_report_late_failure)

    async def abort_run(self) -> None:
        """Cancel a pending retry and the run, and wait until the session is idle."""
        await self.session.abort()
        task = self._run_task
        if task is not None and not task.done():
            if not self.session.is_streaming:
                task.cancel()  # still in preflight (hooks, pre-prompt compaction): nothing to unwind
            await asyncio.wait({task})
        await self.session.wait_for_idle()

    def request_shutdown(self) -> None:
        """A plugin's ``ctx.shutdown()``: quit once the current run has settled (a tool asking goes on to the
        model's answer first), or after the command being handled when nothing runs."""
        self.shutdown_requested = True
        run = self._run_task
        if run is not None and not run.done():
            run.add_done_callback(lambda _run: self.stopping.set())

    # --- input ------------------------------------------------------------------------------------

    def feed_line(self, line: str) -> None:
        task = self.loop.create_task(self.handle_line(line))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def handle_line(self, line: str) -> None:
        try:
            parsed = js_loads(line)
        except ValueError as err:
            self.respond(None, "parse", error=f"Failed to parse command: {err}")
            return
        if not isinstance(parsed, dict):
            self.respond(None, "parse", error=f"Failed to parse command: expected a JSON object, got {line[:40]}")
            return
        kind = parsed.get("type")
        if kind == "extension_ui_response":
            self.ui.handle_response(parsed)
            return
        if not isinstance(kind, str):
            self.respond(None, "parse", error='Failed to parse command: missing string field "type"')
            return
        entry = COMMANDS.get(kind)
        request_id = parsed.get("id")
        if entry is None:
            self.respond(request_id, kind, error=f"Unknown command: {kind}")  # with the id (Pi 0.73.1 drops it)
            return
        handler, params = entry
        try:
            for param in params:
                param.check(parsed)
            data = await handler(self, parsed)
        except PiError as err:
            self.respond(request_id, kind, error=str(err))
        except Exception as err:  # noqa: BLE001 - a failure is the command's error (docs/rpc.md#responses-and-errors)
            warn(f"pi: command {kind} failed:\n" + traceback.format_exc())
            self.respond(request_id, kind, error=str(err) or type(err).__name__)
        else:
            if data is not RESPONDED:
                self.respond(request_id, kind, data=data)
        if self.shutdown_requested:
            self.stopping.set()

    async def serve(self, read_chunk: ChunkSource) -> int:
        """Read until EOF (or a shutdown request), then shut down; returns the exit code."""
        await self.session.start("startup")
        splitter = JsonlSplitter()
        reader = self.loop.create_task(self._read_all(read_chunk, splitter))
        stopper = self.loop.create_task(self.stopping.wait())
        try:
            await asyncio.wait({reader, stopper}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            reader.cancel()
            stopper.cancel()
        await asyncio.sleep(0)  # let lines that arrived with EOF start before shutting down
        await self.shutdown()
        return self.exit_code

    async def _read_all(self, read_chunk: ChunkSource, splitter: JsonlSplitter) -> None:
        while True:
            chunk = await read_chunk()
            if not chunk:
                break
            for record in splitter.feed(chunk):
                self.feed_line(record)
        for record in splitter.finish():
            self.feed_line(record)

    async def shutdown(self) -> None:
        """Abort the turn and any ``bash``, cancel open dialogs, and give the turn a moment to record
        its aborted reply; then stop everything still running."""
        self.ops.bash.abort()
        self.ui.close()
        self.ops.abort_retry()
        self.session.agent.abort()
        run = self._run_task
        if run is not None and not run.done() and not self.session.is_streaming:
            run.cancel()  # accepted but not started: there is no turn to unwind
        pending = [t for t in (self._run_task, *self._tasks) if t is not None and not t.done()]
        pending = [t for t in pending if t is not asyncio.current_task()]
        if pending:
            _done, still = await asyncio.wait(pending, timeout=SHUTDOWN_GRACE_SECONDS)
            for task in still:
                task.cancel()
        await self.session.shutdown("quit")
        self._unsubscribe()
        flush = getattr(sys.stderr, "flush", None)
        if callable(flush):
            flush()
