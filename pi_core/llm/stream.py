"""Build an AssistantMessage while emitting provider events in the order docs/providers.md#stream-events requires.

A provider plugin creates one ``MessageBuilder(model)`` per request and yields what its methods return::

    b = MessageBuilder(model)
    yield b.start()
    ev = b.text_start(); yield ev                  # ev.content_index is the block's index
    yield b.text_delta(ev.content_index, "Hel")
    yield b.text_end(ev.content_index)
    ev = b.toolcall_start("call_1", "read"); yield ev
    yield b.toolcall_delta(ev.content_index, '{"path": "a')   # arguments re-parsed (partial JSON)
    yield b.toolcall_end(ev.content_index)                   # final parse of the collected JSON
    b.set_usage(input=10, output=5)                          # totals and cost recomputed
    yield b.done("stop")        # or: yield b.error(exc, aborted=signal.aborted)

Every event except the terminal one carries ``partial`` = the same mutable message. ``b.error`` (or the
module-level ``error_event``) keeps whatever content and usage already arrived, sets ``stop_reason`` to
"error"/"aborted" and ``error_message``; it also records a ``FailureInfo`` (HTTP status, retry-after,
retryable) that ``pi_core.llm.retry`` reads via ``failure_info(message)`` without it ever reaching JSON.

Also here: ``sanitize_surrogates`` (all outgoing text) and Pi's standard error texts.
"""

from __future__ import annotations

import json
import re
import weakref
from collections.abc import AsyncGenerator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pi_core.errors import ProviderError
from pi_core.models.cost import calculate_cost, update_total_tokens
from pi_core.toolkit.redact import redact, register_secret
from pi_core.types import (
    AssistantMessage,
    AssistantMessageEvent,
    EventType,
    Model,
    StopReason,
    TextContent,
    ThinkingContent,
    ToolCall,
)

if TYPE_CHECKING:
    from pi_core.providers import ApiProvider, StreamOptions
    from pi_core.types import Context

ABORTED_TEXT = "Request was aborted"
UNKNOWN_ERROR_TEXT = "An unknown error occurred"
REDACTED_THINKING_TEXT = "[Reasoning redacted]"


@dataclass(frozen=True, repr=False)
class FailureInfo:
    """Why a request failed, for the retry layer. ``retryable`` None means "judge by the message text"."""

    status: int | None = None
    retry_after: float | None = None
    retryable: bool | None = None
    permanent: bool = False  # no layer retries it, the agent's neither (e.g. nothing listens on a local port)


_FAILURES: dict[int, FailureInfo] = {}


def failure_info(message: AssistantMessage) -> FailureInfo | None:
    """The FailureInfo recorded by ``error_event`` for this (error) message, if any."""
    return _FAILURES.get(id(message))


def _remember(message: AssistantMessage, info: FailureInfo) -> None:
    key = id(message)
    if key not in _FAILURES:
        weakref.finalize(message, _FAILURES.pop, key, None)
    _FAILURES[key] = info


def error_text(exc: BaseException | object) -> str:
    """An exception's message; a non-exception value is shown as JSON (Pi's rule)."""
    if isinstance(exc, BaseException):
        return str(exc) or type(exc).__name__
    if isinstance(exc, str):
        return exc
    try:
        return json.dumps(exc)
    except (TypeError, ValueError):
        return repr(exc)


def error_event(message: AssistantMessage, exc: BaseException | object, aborted: bool,
                info: FailureInfo | None = None) -> AssistantMessageEvent:
    """Finish ``message`` as failed and return the terminal ``error`` event (partial content kept)."""
    message.stop_reason = "aborted" if aborted else "error"
    message.error_message = ABORTED_TEXT if aborted and exc is None else redact(error_text(exc))
    if info is None and isinstance(exc, ProviderError):
        info = FailureInfo(exc.status, exc.retry_after, exc.retryable, bool(getattr(exc, "permanent", False)))
    if info is not None and not aborted:
        _remember(message, info)
    return AssistantMessageEvent(type="error", reason=message.stop_reason, error=message)


_LONE_SURROGATE = re.compile(r"[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]")
_ANY_SURROGATE = re.compile(r"[\ud800-\udfff]")


def sanitize_surrogates(text: str) -> str:
    """Drop unpaired UTF-16 surrogates (they make JSON encoders and vendor APIs fail); join valid pairs."""
    # A regex scan, not a per-character loop: every message of the history passes here on every turn.
    if _ANY_SURROGATE.search(text) is None:
        return text
    cleaned = _LONE_SURROGATE.sub("", text)
    return cleaned.encode("utf-16-le", "surrogatepass").decode("utf-16-le")


class MessageBuilder:
    """Owns the AssistantMessage of one request and turns vendor callbacks into ordered events.

    One block is open at a time, unless ``interleaved``: then (Chat Completions, whose content and
    tool-call deltas may interleave) blocks may stay open while later ones start."""

    def __init__(self, model: Model, message: AssistantMessage | None = None, *, interleaved: bool = False) -> None:
        self.model = model
        self.message = message or AssistantMessage(api=model.api, provider=model.provider, model=model.id)
        self.interleaved = interleaved
        self._tool_json: dict[int, str] = {}  # each open tool call's argument text so far
        self._open: int | None = None

    # -- lifecycle --

    def start(self) -> AssistantMessageEvent:
        return self._event("start")

    def done(self, reason: StopReason) -> AssistantMessageEvent:
        """The ``done`` event (reason stop/length/toolUse). Open blocks must be ended first."""
        self.message.stop_reason = reason
        return AssistantMessageEvent(type="done", reason=reason, message=self.message)

    def error(self, exc: BaseException | object, aborted: bool = False,
              info: FailureInfo | None = None) -> AssistantMessageEvent:
        return error_event(self.message, exc, aborted, info)

    @property
    def open_block(self) -> int | None:
        """Index of the block started but not yet ended, if any."""
        return self._open

    # -- usage --

    def set_usage(self, *, input: int | None = None, output: int | None = None, cache_read: int | None = None,
                  cache_write: int | None = None, total_tokens: int | None = None) -> None:
        """Update only the fields given (proxies omit some); then recompute total and cost."""
        usage = self.message.usage
        if input is not None:
            usage.input = input
        if output is not None:
            usage.output = output
        if cache_read is not None:
            usage.cache_read = cache_read
        if cache_write is not None:
            usage.cache_write = cache_write
        if total_tokens is not None:
            usage.total_tokens = total_tokens
        else:
            update_total_tokens(usage)
        calculate_cost(self.model, usage)

    # -- text --

    def text_start(self) -> AssistantMessageEvent:
        return self._open_block(TextContent(text=""), "text_start")

    def text_delta(self, index: int, delta: str) -> AssistantMessageEvent:
        block = self._block(index, TextContent)
        block.text += delta
        return self._event("text_delta", index, delta=delta)

    def text_end(self, index: int, signature: str | None = None) -> AssistantMessageEvent:
        block = self._block(index, TextContent)
        if signature is not None:
            block.text_signature = signature
        self._open = None
        return self._event("text_end", index, content=block.text)

    # -- thinking --

    def thinking_start(self, signature: str | None = None) -> AssistantMessageEvent:
        return self._open_block(ThinkingContent(thinking="", thinking_signature=signature), "thinking_start")

    def thinking_delta(self, index: int, delta: str) -> AssistantMessageEvent:
        block = self._block(index, ThinkingContent)
        block.thinking += delta
        return self._event("thinking_delta", index, delta=delta)

    def add_thinking_signature(self, index: int, signature: str) -> None:
        block = self._block(index, ThinkingContent)
        block.thinking_signature = (block.thinking_signature or "") + signature

    def thinking_end(self, index: int) -> AssistantMessageEvent:
        block = self._block(index, ThinkingContent)
        self._open = None
        return self._event("thinking_end", index, content=block.thinking)

    def redacted_thinking_start(self, data: str) -> AssistantMessageEvent:
        """Open a redacted block: fixed text, ``redacted=True``, the opaque payload kept as its signature."""
        return self._open_block(
            ThinkingContent(thinking=REDACTED_THINKING_TEXT, thinking_signature=data, redacted=True), "thinking_start")

    # -- tool calls --

    def toolcall_start(self, call_id: str, name: str, thought_signature: str | None = None) -> AssistantMessageEvent:
        event = self._open_block(ToolCall(id=call_id, name=name, arguments={}, thought_signature=thought_signature),
                                 "toolcall_start")
        assert event.content_index is not None
        self._tool_json[event.content_index] = ""
        return event

    def toolcall_delta(self, index: int, delta: str) -> AssistantMessageEvent:
        block = self._block(index, ToolCall)
        text = self._tool_json[index] = self._tool_json.get(index, "") + delta
        # an answer without tool calls never needs the partial-JSON parser
        from pi_core.llm.tool_json import parse_partial_json

        block.arguments = parse_partial_json(text)
        return self._event("toolcall_delta", index, delta=delta)

    def tool_json(self, index: int) -> str:
        """The raw argument JSON collected so far for the tool call at ``index``."""
        return self._tool_json.get(index, "")

    def toolcall_end(self, index: int, arguments: dict[str, Any] | None = None) -> AssistantMessageEvent:  # open: the model's tool arguments, JSON
        """End a tool call; ``arguments`` (if the wire delivered a parsed object) wins over the deltas."""
        block = self._block(index, ToolCall)
        text = self._tool_json.pop(index, "")
        if arguments is None:
            from pi_core.llm.tool_json import parse_partial_json

            arguments = parse_partial_json(text)
        block.arguments = arguments
        self._open = None
        return AssistantMessageEvent(type="toolcall_end", content_index=index, tool_call=block, partial=self.message)

    # -- internals --

    def _open_block(self, block: TextContent | ThinkingContent | ToolCall, kind: EventType) -> AssistantMessageEvent:
        if self._open is not None and not self.interleaved:
            raise RuntimeError(f"block {self._open} is still open; end it before starting another")
        self.message.content.append(block)
        self._open = len(self.message.content) - 1
        return self._event(kind, self._open)

    def _block(self, index: int, kind: type) -> Any:
        block = self.message.content[index]
        if not isinstance(block, kind):
            raise RuntimeError(f"content[{index}] is {type(block).__name__}, not {kind.__name__}")  # noqa: TRY004 - a provider bug, not a caller's wrong type
        return block

    def _event(self, kind: EventType, index: int | None = None, **fields: Any) -> AssistantMessageEvent:
        return AssistantMessageEvent(type=kind, content_index=index, partial=self.message, **fields)


async def safe_stream(provider: ApiProvider, model: Model, context: Context, options: StreamOptions
                      ) -> AsyncGenerator[AssistantMessageEvent, None]:
    """``provider.stream(...)`` with the provider contract enforced: a plugin that raises anyway (or
    ends without a terminal event) still produces exactly one terminal ``error`` event."""
    last: AssistantMessageEvent | None = None
    register_secret(getattr(options, "api_key", None))
    try:
        async for event in provider.stream(model, context, options):
            if last is not None and last.type in ("done", "error"):
                break
            last = event
            if event.type == "error" and event.error is not None and event.error.error_message:
                event.error.error_message = redact(event.error.error_message)  # e.g. "Incorrect API key: sk-..."
            yield event
    except Exception as exc:  # noqa: BLE001 - the contract is "never raises"; a buggy plugin must not crash pi
        partial = last.partial if last is not None and last.partial is not None else None
        message = partial or AssistantMessage(api=model.api, provider=model.provider, model=model.id)
        yield error_event(message, exc, bool(getattr(options.signal, "aborted", False)))
        return
    if last is None or last.type not in ("done", "error"):
        partial = last.partial if last is not None and last.partial is not None else None
        message = partial or AssistantMessage(api=model.api, provider=model.provider, model=model.id)
        yield error_event(message, f"Provider {provider.api} ended the stream without a final event", False)
