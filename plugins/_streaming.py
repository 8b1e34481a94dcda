"""Shared by the provider plugins: honour the abort signal while waiting on the network, and feed
boundary-less vendor deltas into ``pi_core.llm.stream.MessageBuilder``."""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import AsyncIterator
from typing import Any, TypeVar

from pi_core.llm.stream import ABORTED_TEXT, MessageBuilder
from pi_core.signals import AbortSignal
from pi_core.types import (
    AssistantMessage,
    AssistantMessageEvent,
    Model,
    ToolCall,
    Usage,
)

T = TypeVar("T")


class StreamAborted(Exception):
    def __init__(self) -> None:
        super().__init__(ABORTED_TEXT)


def new_builder(model: Model) -> MessageBuilder:
    """A builder whose message starts like Pi's: empty content, zero usage (``totalTokens`` 0), stop."""
    return MessageBuilder(model, AssistantMessage(api=model.api, provider=model.provider, model=model.id,
                                                  usage=Usage(total_tokens=0)))


async def with_abort(items: AsyncIterator[T], signal: AbortSignal) -> AsyncIterator[T]:
    """Yield from ``items`` until exhausted; raise StreamAborted as soon as ``signal`` fires, even mid-wait."""
    waiter = asyncio.ensure_future(signal.wait())
    iterator = items.__aiter__()
    try:
        while True:
            if signal.aborted:
                raise StreamAborted()
            step = asyncio.ensure_future(iterator.__anext__())
            done, _ = await asyncio.wait({step, waiter}, return_when=asyncio.FIRST_COMPLETED)
            if step not in done:
                step.cancel()
                await asyncio.gather(step, return_exceptions=True)
                raise StreamAborted()
            try:
                yield step.result()
            except StopAsyncIteration:
                return
    finally:
        waiter.cancel()
        await asyncio.gather(waiter, return_exceptions=True)


async def await_with_abort(awaitable: Any, signal: AbortSignal) -> Any:
    """Await ``awaitable`` (e.g. the request) but give up with StreamAborted when ``signal`` fires."""
    if signal.aborted:
        if inspect.iscoroutine(awaitable):
            awaitable.close()  # never started: close it so it is not reported as "never awaited"
        raise StreamAborted()
    task = asyncio.ensure_future(awaitable)
    waiter = asyncio.ensure_future(signal.wait())
    try:
        done, _ = await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
        if task in done:
            return task.result()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        raise StreamAborted()
    finally:
        waiter.cancel()
        await asyncio.gather(waiter, return_exceptions=True)


class DeltaStream:
    """For wires without explicit block boundaries (Chat Completions, Gemini): a new kind of delta closes
    the open block and opens the next, so blocks stay in order and each ends before the next starts."""

    def __init__(self, builder: MessageBuilder) -> None:
        self.builder = builder
        self.kind: str | None = None
        self.index: int | None = None

    @property
    def message(self) -> AssistantMessage:
        return self.builder.message

    def close(self) -> list[AssistantMessageEvent]:
        kind, index = self.kind, self.index
        self.kind = self.index = None
        if kind is None or index is None:
            return []
        if kind == "text":
            return [self.builder.text_end(index)]
        if kind == "thinking":
            return [self.builder.thinking_end(index)]
        return [self.builder.toolcall_end(index)]

    def _switch(self, kind: str, opener: Any) -> list[AssistantMessageEvent]:
        events = self.close()
        start = opener()
        events.append(start)
        self.kind, self.index = kind, start.content_index
        return events

    def text(self, delta: str) -> list[AssistantMessageEvent]:
        events = [] if self.kind == "text" else self._switch("text", self.builder.text_start)
        assert self.index is not None
        events.append(self.builder.text_delta(self.index, delta))
        return events

    def thinking(self, delta: str, signature: str | None = None) -> list[AssistantMessageEvent]:
        events = [] if self.kind == "thinking" else self._switch(
            "thinking", lambda: self.builder.thinking_start(signature))
        assert self.index is not None
        events.append(self.builder.thinking_delta(self.index, delta))
        return events

    def tool_start(self, call_id: str, name: str) -> list[AssistantMessageEvent]:
        return self._switch("tool", lambda: self.builder.toolcall_start(call_id, name))

    def current_tool(self) -> ToolCall | None:
        if self.kind != "tool" or self.index is None:
            return None
        block = self.message.content[self.index]
        return block if isinstance(block, ToolCall) else None

    def tool_args(self, delta: str) -> list[AssistantMessageEvent]:
        assert self.kind == "tool" and self.index is not None
        return [self.builder.toolcall_delta(self.index, delta)]

    def whole_tool_call(self, call_id: str, name: str, arguments: dict[str, Any],
                        thought_signature: str | None = None) -> list[AssistantMessageEvent]:
        """A call that arrives complete (Gemini): start, one delta carrying all arguments, end."""
        events = self._switch("tool", lambda: self.builder.toolcall_start(call_id, name, thought_signature))
        assert self.index is not None
        events.append(self.builder.toolcall_delta(self.index, json.dumps(arguments, ensure_ascii=False, separators=(",", ":"))))
        events.append(self.builder.toolcall_end(self.index, arguments))
        self.kind = self.index = None
        return events
