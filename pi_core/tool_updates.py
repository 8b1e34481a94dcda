"""A running tool call's partial results (``ctx.update``) as ``tool_execution_update`` events."""

from __future__ import annotations

import asyncio
import threading
from typing import TYPE_CHECKING

from pi_core.events import AgentEvent

if TYPE_CHECKING:
    from pi_core.events import Emit
    from pi_core.tools import ToolResult
    from pi_core.types import ToolCall

UPDATE_INTERVAL_SECONDS = 0.1  # the fastest a call's partial results become events


class PartialResults:
    """A running call's partial results as ``tool_execution_update`` events, in every mode alike: at most
    one per ``UPDATE_INTERVAL_SECONDS`` (a burst keeps its latest), in order, all sent before the call ends.
    ``offer`` may be called from the tool's worker thread."""

    def __init__(self, loop: asyncio.AbstractEventLoop, emit: Emit, call: ToolCall) -> None:
        self.loop, self.emit, self.call = loop, emit, call
        self.latest: ToolResult | None = None
        self.last_sent = float("-inf")
        self.timer: asyncio.TimerHandle | None = None
        self.tail: asyncio.Future[None] | None = None
        self.closed = self.threaded = False
        self.thread = threading.get_ident()  # the loop's

    def offer(self, partial: ToolResult) -> None:
        if threading.get_ident() == self.thread:
            self._offer(partial)
        else:
            self.threaded = True
            self.loop.call_soon_threadsafe(self._offer, partial)

    def _offer(self, partial: ToolResult) -> None:
        if self.closed:
            return
        self.latest = partial
        if self.timer is not None:  # it sends the latest when due (sending now too made two updates in a row)
            return
        due = self.last_sent + UPDATE_INTERVAL_SECONDS - self.loop.time()
        if due <= 0:
            self._send()
        else:
            self.timer = self.loop.call_later(due, self._send)

    def _send(self) -> None:
        self.timer = None
        if self.latest is None:
            return
        partial, self.latest = self.latest, None
        self.last_sent = self.loop.time()
        call = self.call
        event = AgentEvent("tool_execution_update", tool_call_id=call.id, tool_name=call.name, args=call.arguments,
                           partial_result=partial)
        self.tail = asyncio.ensure_future(self._after(self.tail, event))

    async def _after(self, previous: asyncio.Future[None] | None, event: AgentEvent) -> None:
        if previous is not None:
            await asyncio.gather(previous, return_exceptions=True)
        await self.emit(event)

    async def close(self) -> None:
        if self.threaded:  # offers made on the loop's thread were taken at once
            await asyncio.sleep(0)  # offers the worker thread queued just before it returned
        if self.timer is not None:
            self.timer.cancel()
        self._send()
        self.closed = True
        if self.tail is not None:
            try:
                await self.tail
            except Exception as err:  # noqa: BLE001 - a listener failing on an update must not fail the call
                import logging

                logging.getLogger("pi").warning("tool_execution_update listener failed: %s", err)
