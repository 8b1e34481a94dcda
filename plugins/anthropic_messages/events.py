"""Turn Anthropic's streamed message events (parsed SSE ``data``) into MessageBuilder calls."""

from __future__ import annotations

import json
from typing import Any

from pi_plugins.anthropic_messages.payload import from_wire_tool_name

from pi_core.llm.stream import FailureInfo, MessageBuilder
from pi_core.types import AssistantMessageEvent, StopReason, ToolDefinition

STOP_REASONS: dict[str, StopReason] = {"end_turn": "stop", "pause_turn": "stop", "stop_sequence": "stop",
                                       "max_tokens": "length", "tool_use": "toolUse",
                                       "refusal": "error", "sensitive": "error"}
# In-band error types worth another attempt (Anthropic sends these on an already-open stream).
RETRYABLE_STREAM_ERRORS = frozenset({"overloaded_error", "api_error", "rate_limit_error", "timeout_error"})


class EventFailure(Exception):
    """The stream said something the message cannot be built from."""

    def __init__(self, message: str, info: FailureInfo | None = None) -> None:
        super().__init__(message)
        self.info = info


def parse_event_data(data: str) -> dict[str, Any]:
    """Strict JSON, else JSON after the tool-argument repair (raw control characters, bad escapes)."""
    try:
        value = json.loads(data)
    except ValueError:
        # the repair: only for an event that is not strict JSON
        from pi_core.llm.tool_json import repair_json

        try:
            value = json.loads(repair_json(data))
        except ValueError as err:
            raise EventFailure(f"Malformed stream event (invalid JSON): {err}: {data[:200]}",
                               FailureInfo(retryable=False)) from None
    if not isinstance(value, dict):
        raise EventFailure(f"Malformed stream event (not an object): {data[:200]}", FailureInfo(retryable=False))
    return value


def in_band_error_retryable(data: str) -> bool:
    try:
        body = json.loads(data)
    except ValueError:
        return False
    error = body.get("error") if isinstance(body, dict) else None
    return isinstance(error, dict) and error.get("type") in RETRYABLE_STREAM_ERRORS


def map_stop_reason(reason: str) -> StopReason:
    mapped = STOP_REASONS.get(reason)
    if mapped is None:
        raise EventFailure(f"Unhandled stop reason: {reason}", FailureInfo(retryable=False))
    return mapped


class EventReader:
    """Applies one event at a time; maps Anthropic's block index onto our content index."""

    def __init__(self, builder: MessageBuilder, tools: list[ToolDefinition] | None, oauth: bool) -> None:
        self.b, self.tools, self.oauth = builder, tools, oauth
        self.blocks: dict[int, int] = {}  # wire index -> content index
        self.stop_reason: StopReason = "stop"
        self.saw_message_stop = False
        self.out: list[AssistantMessageEvent] = []

    def handle(self, event: dict[str, Any]) -> list[AssistantMessageEvent]:
        """Apply one event; return the pi events it produced."""
        self.out = []
        kind = event.get("type")
        if kind == "message_start":
            message = event.get("message") or {}
            self.b.message.response_id = message.get("id")
            self._usage(message.get("usage"))
        elif kind == "content_block_start":
            self._block_start(event["index"], event.get("content_block") or {})
        elif kind == "content_block_delta":
            self._block_delta(event["index"], event.get("delta") or {})
        elif kind == "content_block_stop":
            self._block_stop(event["index"])
        elif kind == "message_delta":
            reason = (event.get("delta") or {}).get("stop_reason")
            if reason is not None:
                self.stop_reason = map_stop_reason(reason)
            self._usage(event.get("usage"))
        elif kind == "message_stop":
            self.saw_message_stop = True
        return self.out

    def _usage(self, usage: dict[str, Any] | None) -> None:
        if not usage:
            return
        # Only fields that are present and non-null count: some proxies omit them.
        self.b.set_usage(input=usage.get("input_tokens"), output=usage.get("output_tokens"),
                         cache_read=usage.get("cache_read_input_tokens"),
                         cache_write=usage.get("cache_creation_input_tokens"))

    def _block_start(self, index: int, block: dict[str, Any]) -> None:
        kind = block.get("type")
        if kind == "text":
            event = self.b.text_start()
        elif kind == "thinking":
            event = self.b.thinking_start()
        elif kind == "redacted_thinking":
            event = self.b.redacted_thinking_start(block.get("data") or "")
        elif kind == "tool_use":
            event = self.b.toolcall_start(block["id"], from_wire_tool_name(block["name"], self.tools, self.oauth))
        else:
            return  # server tools and other block kinds carry nothing pi shows
        assert event.content_index is not None
        self.blocks[index] = event.content_index
        self.out.append(event)

    def _block_delta(self, index: int, delta: dict[str, Any]) -> None:
        position = self.blocks.get(index)
        if position is None:
            return
        kind = delta.get("type")
        if kind == "text_delta":
            self.out.append(self.b.text_delta(position, delta.get("text") or ""))
        elif kind == "thinking_delta":
            self.out.append(self.b.thinking_delta(position, delta.get("thinking") or ""))
        elif kind == "signature_delta":
            self.b.add_thinking_signature(position, delta.get("signature") or "")
        elif kind == "input_json_delta":
            self.out.append(self.b.toolcall_delta(position, delta.get("partial_json") or ""))

    def _block_stop(self, index: int) -> None:
        position = self.blocks.pop(index, None)
        if position is None:
            return
        kind = self.b.message.content[position].type
        if kind == "text":
            self.out.append(self.b.text_end(position))
        elif kind == "thinking":
            self.out.append(self.b.thinking_end(position))
        else:
            self.out.append(self.b.toolcall_end(position))
