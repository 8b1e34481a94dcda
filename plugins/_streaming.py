"""Shared by the provider plugins: the provider contract around a request (``StreamRun``: one terminal error
event, the wire stream closed), the terminal error event, the payload hook, the key a wire needs, and feeding
boundary-less vendor deltas into ``pi_core.llm.stream.MessageBuilder`` (HTTP: ``pi_core.llm.transport``)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from types import TracebackType
from typing import TYPE_CHECKING, Any, Protocol, Self

from pi_core.errors import ProviderError
from pi_core.llm.stream import UNKNOWN_ERROR_TEXT, MessageBuilder
from pi_core.llm.transport import StreamAborted, open_sse
from pi_core.models.env_keys import env_api_key
from pi_core.providers import StreamOptions, resolved
from pi_core.types import (
    AssistantMessage,
    AssistantMessageEvent,
    Model,
    ToolCall,
    Usage,
)

if TYPE_CHECKING:
    from pi_core.llm.transport import SSEStream, WireRequest
    from pi_core.llm.wire import StatusText
    from pi_core.types import StopReason

__all__ = ["DeltaStream", "StreamAborted", "StreamRun", "apply_payload_hook", "failure_event", "new_builder",
           "reported_stop", "required_key", "without_client_retries"]


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


Failure = Callable[[MessageBuilder, Exception, StreamOptions], AssistantMessageEvent]


class StreamRun:
    """The provider contract around one request: whatever fails inside ``async with run:`` (the request, the
    stream, a check at its end) becomes the one terminal error event, ``run.failure``, which the stream yields
    after the block; the wire stream opened with ``run.open`` is closed however the block ends (a consumer
    that stops reading early included). ``settle`` runs before that error event is made (Bedrock ends the
    blocks its stream left open); ``failure`` makes it (``failure_event`` unless the wire has its own)::

        run = StreamRun(builder, options)
        async with run:
            stream = await run.open(request, status_text, model)
            ...
            yield builder.done(stop)
        if run.failure is not None:
            yield run.failure
    """

    __slots__ = ("builder", "fail", "failure", "options", "settle", "stream")

    def __init__(self, builder: MessageBuilder, options: StreamOptions, *, settle: Callable[[], object] | None = None,
                 failure: Failure | None = None) -> None:
        self.builder = builder
        self.options = options
        self.settle = settle
        self.fail: Failure = failure or failure_event
        self.stream: SSEStream | None = None
        self.failure: AssistantMessageEvent | None = None

    async def open(self, request: WireRequest, status_text: StatusText, model: Model) -> SSEStream:
        """``open_sse`` with this run's options; the stream is closed when the run ends."""
        self.stream = await open_sse(request, self.options, status_text, model)
        return self.stream

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, kind: type[BaseException] | None, err: BaseException | None,
                        trace: TracebackType | None) -> bool:
        failed = isinstance(err, Exception)  # a cancel or a closed generator goes on as it is
        try:
            if isinstance(err, Exception):
                if self.settle is not None:
                    self.settle()
                self.failure = self.fail(self.builder, err, self.options)
        finally:
            if self.stream is not None:
                await self.stream.aclose()
        return failed


def required_key(model: Model, options: StreamOptions, *, from_env: bool = True) -> str:
    """The request's API key: the one given, else (``from_env``) the provider's environment key; none is a
    permanent failure."""
    key = options.api_key
    if not key and from_env:
        key = env_api_key(model.provider)
    if not key:
        raise ProviderError(f"No API key for provider: {model.provider}", retryable=False)
    return key


def without_client_retries(options: StreamOptions) -> StreamOptions:
    """For a wire whose vendor client never retried (Gemini, Codex): the transport does not retry either
    unless ``max_retries`` asks it to; pi's own retry layer does."""
    return dataclasses.replace(options, max_retries=0) if options.max_retries is None else options


class ReportsStop(Protocol):
    stop: StopReason | None
    stop_text: str | None


def reported_stop(reader: ReportsStop, missing: str, error: Callable[[str], Exception]) -> StopReason:
    """The stop reason a stream reported of its own (Bedrock's ``messageStop``, Mistral's finish reason): a
    stream that ended without one fails with ``missing``, a reported ``error`` with its text."""
    if reader.stop is None:
        raise error(missing)
    if reader.stop == "error":
        raise error(reader.stop_text or UNKNOWN_ERROR_TEXT)
    return reader.stop


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
