"""Shared by the provider plugins: the terminal error event, the payload hook, and feeding
boundary-less vendor deltas into ``pi_core.llm.stream.MessageBuilder`` (HTTP: ``pi_core.llm.transport``)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from pi_core.llm.stream import MessageBuilder
from pi_core.llm.transport import StreamAborted
from pi_core.providers import resolved
from pi_core.types import (
    AssistantMessage,
    AssistantMessageEvent,
    Model,
    ToolCall,
    Usage,
)

if TYPE_CHECKING:
    from pi_core.providers import StreamOptions

__all__ = ["DeltaStream", "StreamAborted", "apply_payload_hook", "failure_event", "new_builder"]


def new_builder(model: Model) -> MessageBuilder:
    """A builder whose message starts like Pi's: empty content, zero usage (``totalTokens`` 0), stop."""
    # model_construct: these values are well typed already (validating them was a cost of every request)
    return MessageBuilder(model, AssistantMessage.model_construct(api=model.api, provider=model.provider,
                                                                  model=model.id,
                                                                  usage=Usage.model_construct(total_tokens=0)))


async def apply_payload_hook(body: dict[str, Any], model: Model, options: StreamOptions) -> dict[str, Any]:
    """``options.on_payload`` may replace the body the wire built (returning None keeps it); plugin hooks
    behind it may be async."""
    if options.on_payload is None:
        return body
    replaced = await resolved(options.on_payload(body, model))
    return replaced if replaced is not None else body


def failure_event(builder: MessageBuilder, err: BaseException, options: StreamOptions,
                  text: str | None = None) -> AssistantMessageEvent:
    """The one terminal ``error`` event for ``err``: aborted when the signal fired, else its text and
    (for a ProviderError/WireError) the status, retry-after and retryability the retry layers read."""
    aborted = options.signal.aborted or isinstance(err, StreamAborted)
    if aborted:
        return builder.error(None, aborted=True)
    return builder.error(err if text is None else text, aborted=False)


class DeltaStream:
    """For wires without explicit block boundaries (Chat Completions, Gemini): a new kind of delta closes
    the open block and opens the next, so blocks stay in order and each ends before the next starts.

    ``defer_ends``: Chat Completions may interleave content and tool-call deltas, so there (as in Pi)
    every block stays open until the stream ends, and ``close`` ends them all in block order."""

    def __init__(self, builder: MessageBuilder, *, defer_ends: bool = False) -> None:
        self.builder = builder
        self.kind: str | None = None
        self.index: int | None = None
        self.defer_ends = defer_ends
        if defer_ends:
            builder.interleaved = True
        self._open: list[tuple[str, int]] = []  # blocks left open by a switch (defer_ends)

    @property
    def message(self) -> AssistantMessage:
        return self.builder.message

    def close(self) -> list[AssistantMessageEvent]:
        """End the open block (with ``defer_ends``: every block still open)."""
        if self.kind is not None and self.index is not None:
            self._open.append((self.kind, self.index))
        self.kind = self.index = None
        opened, self._open = sorted(self._open, key=lambda block: block[1]), []
        return [self._end(kind, index) for kind, index in opened]

    def _end(self, kind: str, index: int) -> AssistantMessageEvent:
        if kind == "text":
            return self.builder.text_end(index)
        if kind == "thinking":
            return self.builder.thinking_end(index)
        return self.builder.toolcall_end(index)

    def _switch(self, kind: str, opener: Any) -> list[AssistantMessageEvent]:
        if self.defer_ends:
            if self.kind is not None and self.index is not None:
                self._open.append((self.kind, self.index))
            events: list[AssistantMessageEvent] = []
        else:
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
