"""Print mode (``-p``) and JSON mode (``--mode json``), plus signal handling shared by every mode.

Text mode prints only the final answer on stdout; diagnostics go to stderr. JSON mode prints the
session header then one event per line. Ctrl-C / SIGTERM abort the run, which kills running tool
process groups, so nothing is left orphaned (Pi 0.73.1 leaves bash trees behind on SIGINT).
"""

from __future__ import annotations

import asyncio
import json
import signal
import sys
import time
from collections.abc import Coroutine
from typing import Any

from pi_core.events import AgentEvent
from pi_core.modes.declaration import StreamDeclarer
from pi_core.session import AgentSession
from pi_core.toolkit.redact import redact
from pi_core.types import AssistantMessage, ImageContent, encodable
from pi_core.ui import UI, Theme

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


def _dumps(value: Any) -> str:
    """One JSON-mode line: secrets redacted as in session files; what UTF-8 cannot encode replaced."""
    return redact(encodable(json.dumps(value, ensure_ascii=False, separators=(",", ":"))))


class Spinner:
    """A one-line "working" indicator on stderr, only when stderr is a terminal."""

    def __init__(self) -> None:
        self.enabled = sys.stderr.isatty()
        self._task: asyncio.Task[None] | None = None
        self._started = 0.0

    def start(self) -> None:
        if self.enabled and self._task is None:
            self._started = time.monotonic()
            self._task = asyncio.get_running_loop().create_task(self._spin())

    async def _spin(self) -> None:
        frame = 0
        while True:
            elapsed = time.monotonic() - self._started
            sys.stderr.write(f"\r{SPINNER[frame % len(SPINNER)]} Working... {elapsed:.1f}s")
            sys.stderr.flush()
            frame += 1
            await asyncio.sleep(0.1)

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            self._task = None
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()


async def run_print_mode(session: AgentSession, prompts: list[str], images: list[ImageContent],
                         *, json_mode: bool, theme: Theme | None = None) -> int:
    spinner = Spinner() if not json_mode else None
    if json_mode:
        header = session.store.header
        sys.stdout.write(_dumps(header) + "\n")
        sys.stdout.flush()

    declarer = StreamDeclarer(session)

    def on_event(event: AgentEvent) -> None:
        if event.type == "extension_error":
            sys.stderr.write(extension_error_line(event) + "\n")
        if json_mode:
            sys.stdout.write("".join(_dumps(out.to_json()) + "\n" for out in declarer.events(event)))
            sys.stdout.flush()
        elif spinner is not None:
            if event.type in ("agent_start", "tool_execution_end"):
                spinner.start()
            elif event.type in ("message_update", "tool_execution_start", "agent_end"):
                spinner.stop()

    session.set_ui(UI(theme), "json" if json_mode else "text")  # nobody can answer: dialogs give their defaults
    session.subscribe(on_event)
    await session.start("startup")
    try:
        for index, text in enumerate(prompts):
            await session.prompt(text, images if index == 0 else None)
            if session.agent.signal is None and _aborted(session):
                break
    finally:
        if spinner is not None:
            spinner.stop()
        await session.shutdown("quit")
    if json_mode:
        return 0
    last = session.messages[-1] if session.messages else None
    if isinstance(last, AssistantMessage):
        if last.stop_reason in ("error", "aborted"):
            fallback = "Request aborted" if last.stop_reason == "aborted" else "Request error"
            sys.stderr.write((last.error_message or fallback) + "\n")
            return 1
        for block in last.content:
            if block.type == "text":
                sys.stdout.write(block.text + "\n")
    return 0


def extension_error_line(event: AgentEvent) -> str:
    """``Extension error (<plugin>, <hook>): <error>``: the stderr line of print mode."""
    hook = event.event if ":" in event.event else f"pi_{event.event}"
    kind = event.get("error_type")
    text = f"{kind}: {event.error}" if kind and kind != event.error else event.error
    return f"Extension error ({event.get('plugin') or event.extension_path}, {hook}): {text}"


def _aborted(session: AgentSession) -> bool:
    last = session.last_assistant()
    return last is not None and last.stop_reason == "aborted"


def run_with_signals(coro: Coroutine[object, object, int], session: AgentSession, *, exiting: bool = False) -> int:
    """Run a mode's coroutine; SIGINT/SIGTERM/SIGHUP abort the run and end with 130/143/129.

    ``exiting`` (the CLI, which leaves the process right after): skip the event loop's teardown of
    the default thread pool (a thread started to join idle workers, tens of ms on a busy machine);
    tasks are still cancelled and async generators closed, so their ``finally`` blocks run."""

    async def main() -> int:
        loop = asyncio.get_running_loop()
        received: list[int] = []
        task = asyncio.current_task()

        def on_signal(signum: int) -> None:
            if received and signum == signal.SIGINT:
                if task is not None:
                    task.cancel()  # second Ctrl-C: stop waiting for a clean end
                return
            received.append(signum)
            session.abort_retry()  # a run waiting out a retry delay stops at once
            session.agent.abort()

        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            try:
                loop.add_signal_handler(signum, on_signal, signum)
            except (NotImplementedError, RuntimeError):
                pass
        try:
            code = await coro
        except asyncio.CancelledError:
            code = 130
        if received:
            codes: dict[int, int] = {signal.SIGINT: 130, signal.SIGTERM: 143, signal.SIGHUP: 129}
            return codes.get(received[0], 1)
        return code

    if not exiting:
        return asyncio.run(main())
    loop = asyncio.new_event_loop()
    try:
        return loop.run_until_complete(main())
    finally:
        pending = [task for task in asyncio.all_tasks(loop) if not task.done()]
        for task in pending:
            task.cancel()
        if pending:
            loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        loop.run_until_complete(loop.shutdown_asyncgens())
