"""Stream one Responses request over pi's SSE transport and translate its typed events into pi events."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from pi_plugins._copilot import copilot_headers
from pi_plugins._openai_common import (
    json_events,
    request_for,
    resolve_api_key,
    status_text,
)
from pi_plugins._streaming import (
    StreamAborted,
    StreamRun,
    apply_payload_hook,
    new_builder,
)
from pi_plugins.openai_responses.convert import (
    build_body,
    encode_text_signature,
    session_headers,
)

from pi_core.llm.stream import UNKNOWN_ERROR_TEXT, MessageBuilder
from pi_core.providers import StreamOptions
from pi_core.types import (
    AssistantMessageEvent,
    Context,
    Model,
    StopReason,
    TextContent,
    ThinkingContent,
    ToolCall,
)

_STATUS: dict[str, StopReason] = {"completed": "stop", "in_progress": "stop", "queued": "stop",
                                  "incomplete": "length", "failed": "error", "cancelled": "error"}
_TIER_MULTIPLIER = {"flex": 0.5, "priority": 2.0}
_FINAL_EVENTS = ("response.completed", "response.incomplete", "response.cancelled")


class ResponsesError(Exception):
    pass


class EventReader:
    """Responses stream events -> pi events (shared with the Codex wire)."""

    def __init__(self, builder: MessageBuilder, model: Model) -> None:
        self.builder = builder
        self.model = model
        self.item: dict[str, Any] | None = None
        self.index: int | None = None
        self.stop: StopReason = "stop"

    def feed(self, event: dict[str, Any]) -> list[AssistantMessageEvent]:
        kind = event.get("type", "")
        handler = getattr(self, "_on_" + kind.removeprefix("response.").replace(".", "_"), None)
        if kind == "error":
            raise ResponsesError(f"Error Code {event.get('code')}: {event.get('message')}")
        if kind in _FINAL_EVENTS:
            self._finish(event.get("response") or {})
            return []
        if kind == "response.failed":
            raise ResponsesError(_failed_text(event.get("response") or {}))
        return handler(event) if handler else []

    # -- items --

    def _on_created(self, event: dict[str, Any]) -> list[AssistantMessageEvent]:
        response_id = (event.get("response") or {}).get("id")
        if response_id:
            self.builder.message.response_id = response_id
        return []

    def _on_output_item_added(self, event: dict[str, Any]) -> list[AssistantMessageEvent]:
        item = dict(event.get("item") or {})
        kind = item.get("type")
        if kind == "reasoning":
            item["summary"] = list(item.get("summary") or [])
            start = self.builder.thinking_start()
        elif kind == "message":
            item["content"] = list(item.get("content") or [])
            start = self.builder.text_start()
        elif kind == "function_call":
            start = self.builder.toolcall_start(f"{item.get('call_id')}|{item.get('id')}", item.get("name") or "")
        else:
            return []
        assert start.content_index is not None
        self.item, self.index = item, start.content_index
        events = [start]
        if kind == "function_call" and item.get("arguments"):
            events.append(self.builder.toolcall_delta(start.content_index, item["arguments"]))
        return events

    def _open(self, kind: str) -> tuple[dict[str, Any], int] | None:
        """The item being streamed and its content index, when it is of ``kind``."""
        if self.item is None or self.item.get("type") != kind or self.index is None:
            return None
        return self.item, self.index

    def _on_reasoning_summary_part_added(self, event: dict[str, Any]) -> list[AssistantMessageEvent]:
        current = self._open("reasoning")
        if current is not None:
            current[0]["summary"].append(dict(event.get("part") or {"type": "summary_text", "text": ""}))
        return []

    def _summary_delta(self, delta: str) -> list[AssistantMessageEvent]:
        current = self._open("reasoning")
        if current is None or not current[0]["summary"]:
            return []
        part = current[0]["summary"][-1]
        part["text"] = part.get("text", "") + delta
        return [self.builder.thinking_delta(current[1], delta)]

    def _on_reasoning_summary_text_delta(self, event: dict[str, Any]) -> list[AssistantMessageEvent]:
        return self._summary_delta(event.get("delta") or "")

    def _on_reasoning_summary_part_done(self, event: dict[str, Any]) -> list[AssistantMessageEvent]:
        return self._summary_delta("\n\n")

    def _on_content_part_added(self, event: dict[str, Any]) -> list[AssistantMessageEvent]:
        part = event.get("part") or {}
        current = self._open("message")
        if current is not None and part.get("type") in ("output_text", "refusal"):
            current[0]["content"].append(dict(part))
        return []

    def _text_delta(self, part_type: str, field: str, delta: str) -> list[AssistantMessageEvent]:
        current = self._open("message")
        if current is None or not current[0]["content"]:
            return []
        part = current[0]["content"][-1]
        if part.get("type") != part_type:
            return []
        part[field] = part.get(field, "") + delta
        return [self.builder.text_delta(current[1], delta)]

    def _on_output_text_delta(self, event: dict[str, Any]) -> list[AssistantMessageEvent]:
        return self._text_delta("output_text", "text", event.get("delta") or "")

    def _on_refusal_delta(self, event: dict[str, Any]) -> list[AssistantMessageEvent]:
        return self._text_delta("refusal", "refusal", event.get("delta") or "")

    def _on_function_call_arguments_delta(self, event: dict[str, Any]) -> list[AssistantMessageEvent]:
        current = self._open("function_call")
        if current is None:
            return []
        return [self.builder.toolcall_delta(current[1], event.get("delta") or "")]

    def _on_function_call_arguments_done(self, event: dict[str, Any]) -> list[AssistantMessageEvent]:
        current = self._open("function_call")
        if current is not None:
            current[0]["final_arguments"] = event.get("arguments")
        return []

    def _on_output_item_done(self, event: dict[str, Any]) -> list[AssistantMessageEvent]:
        item = event.get("item") or {}
        index, kind = self.index, item.get("type")
        if index is None or self.item is None or self.item.get("type") != kind:
            return []
        block = self.builder.message.content[index]
        self.item = self.index = None
        if kind == "reasoning" and isinstance(block, ThinkingContent):
            block.thinking = "\n\n".join(part.get("text", "") for part in item.get("summary") or [])
            block.thinking_signature = json.dumps(item, separators=(",", ":"))
            return [self.builder.thinking_end(index)]
        if kind == "message" and isinstance(block, TextContent):
            block.text = "".join(part.get("text", "") if part.get("type") == "output_text" else part.get("refusal", "")
                                 for part in item.get("content") or [])
            return [self.builder.text_end(index, encode_text_signature(item.get("id", ""), item.get("phase")))]
        if kind == "function_call" and isinstance(block, ToolCall):
            raw = self.builder.tool_json(index) or item.get("arguments") or "{}"
            # the partial-JSON parser: only once a tool call ends
            from pi_core.llm.tool_json import parse_partial_json

            block.id = f"{item.get('call_id')}|{item.get('id')}"
            return [self.builder.toolcall_end(index, parse_partial_json(raw))]
        return []

    # -- the end --

    def _finish(self, response: dict[str, Any]) -> None:
        usage = response.get("usage")
        if usage:
            cached = (usage.get("input_tokens_details") or {}).get("cached_tokens") or 0
            self.builder.set_usage(input=(usage.get("input_tokens") or 0) - cached,
                                   output=usage.get("output_tokens") or 0, cache_read=cached, cache_write=0,
                                   total_tokens=usage.get("total_tokens") or 0)
        multiplier = _TIER_MULTIPLIER.get(response.get("service_tier") or "")
        if multiplier:
            cost = self.builder.message.usage.cost
            cost.input, cost.output = cost.input * multiplier, cost.output * multiplier
            cost.cache_read, cost.cache_write = cost.cache_read * multiplier, cost.cache_write * multiplier
            cost.total = cost.input + cost.output + cost.cache_read + cost.cache_write
        status = response.get("status")
        if status is not None and status not in _STATUS:
            raise ResponsesError(f"Unhandled stop reason: {status}")
        self.stop = _STATUS.get(status or "completed", "stop")
        if self.stop == "stop" and self.builder.message.tool_calls():
            self.stop = "toolUse"


def _failed_text(response: dict[str, Any]) -> str:
    error = response.get("error")
    if error:
        return f"{error.get('code') or 'unknown'}: {error.get('message') or 'no message'}"
    reason = (response.get("incomplete_details") or {}).get("reason")
    return f"incomplete: {reason}" if reason else "Unknown error (no error details in response)"


async def stream_responses(model: Model, context: Context, options: StreamOptions) -> AsyncIterator[AssistantMessageEvent]:
    builder = new_builder(model)
    run = StreamRun(builder, options)
    async with run:
        api_key = resolve_api_key(model, options)
        body = await apply_payload_hook(build_body(model, context, options), model, options)
        request = request_for(model, options, api_key, "/responses", body,
                              {**copilot_headers(model, context), **session_headers(model, options)})
        stream = await run.open(request, status_text, model)
        yield builder.start()
        reader = EventReader(builder, model)
        async for event in json_events(stream, options):
            if isinstance(event, dict):
                for out in reader.feed(event):
                    yield out
        if options.signal.aborted:
            raise StreamAborted()
        if reader.stop in ("error", "aborted"):
            raise ResponsesError(UNKNOWN_ERROR_TEXT)
        stream.release()
        yield builder.done(reader.stop)
    if run.failure is not None:
        yield run.failure
