"""Stream one Chat Completions request over pi's SSE transport and translate its chunks into pi events."""

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
    DeltaStream,
    StreamAborted,
    StreamRun,
    apply_payload_hook,
    new_builder,
)
from pi_plugins.openai_completions.compat import get_compat
from pi_plugins.openai_completions.convert import build_body

from pi_core.llm.stream import MessageBuilder
from pi_core.providers import StreamOptions
from pi_core.types import AssistantMessageEvent, Context, Model, StopReason, ToolCall

_REASONING_FIELDS = ("reasoning_content", "reasoning", "reasoning_text")
_STOP_REASONS: dict[str | None, StopReason] = {
    None: "stop", "stop": "stop", "end": "stop", "length": "length",
    "tool_calls": "toolUse", "function_call": "toolUse",
}


class FinishReasonError(Exception):
    pass


def _usage(builder: MessageBuilder, data: dict[str, Any]) -> None:
    details = data.get("prompt_tokens_details") or {}
    cache_write = details.get("cache_write_tokens") or 0
    cache_read = details.get("cached_tokens") or data.get("prompt_cache_hit_tokens") or 0
    if cache_write > 0:
        cache_read = max(0, cache_read - cache_write)
    builder.set_usage(input=max(0, (data.get("prompt_tokens") or 0) - cache_read - cache_write),
                      output=data.get("completion_tokens") or 0, cache_read=cache_read, cache_write=cache_write)


class _ChunkReader:
    def __init__(self, builder: MessageBuilder) -> None:
        self.builder = builder
        self.deltas = DeltaStream(builder, defer_ends=True)
        self.tool_index: int | None = None
        self.stop: StopReason = "stop"
        self.bad_finish: str | None = None

    def feed(self, chunk: dict[str, Any]) -> list[AssistantMessageEvent]:
        """One chunk as the raw JSON dict (no SDK model objects: building them per chunk dominated a turn)."""
        usage = chunk.get("usage")
        if usage:
            _usage(self.builder, usage)
        choices = chunk.get("choices")
        if not choices:
            return []
        choice = choices[0]
        if not usage and choice.get("usage"):
            _usage(self.builder, choice["usage"])
        finish = choice.get("finish_reason")
        if finish:
            mapped = _STOP_REASONS.get(finish)
            if mapped is None:
                self.bad_finish = finish
            else:
                self.stop = mapped
        delta = choice.get("delta")
        if not delta:
            return []
        events: list[AssistantMessageEvent] = []
        if delta.get("content"):
            events += self.deltas.text(delta["content"])
        for field in _REASONING_FIELDS:
            value = delta.get(field)
            if value:
                events += self.deltas.thinking(value, field)
                break
        for call in delta.get("tool_calls") or []:
            events += self._tool_delta(call)
        details = delta.get("reasoning_details")
        if isinstance(details, list):
            self._attach_encrypted_reasoning(details)
        return events

    def _tool_delta(self, call: dict[str, Any]) -> list[AssistantMessageEvent]:
        current = self.deltas.current_tool()
        fn = call.get("function") or {}
        call_id, index = call.get("id"), call.get("index")
        events: list[AssistantMessageEvent] = []
        is_new = current is None or (call_id and call_id != current.id) or \
            (index is not None and self.tool_index is not None and index != self.tool_index)
        if is_new:
            events += self.deltas.tool_start(call_id or "", fn.get("name") or "")
            self.tool_index = index
            current = self.deltas.current_tool()
        assert current is not None
        if call_id:
            current.id = call_id
        if fn.get("name"):
            current.name = fn["name"]
        events += self.deltas.tool_args(fn.get("arguments") or "")
        return events

    def _attach_encrypted_reasoning(self, details: list[Any]) -> None:
        for detail in details:
            if not isinstance(detail, dict) or detail.get("type") != "reasoning.encrypted":
                continue
            for block in self.builder.message.content:
                if isinstance(block, ToolCall) and detail.get("id") and block.id == detail["id"] and detail.get("data"):
                    block.thought_signature = json.dumps(detail)


async def stream_completions(model: Model, context: Context, options: StreamOptions) -> AsyncIterator[AssistantMessageEvent]:
    builder = new_builder(model)
    run = StreamRun(builder, options)
    async with run:
        api_key = resolve_api_key(model, options)
        body = await apply_payload_hook(build_body(model, context, options, get_compat(model)), model, options)
        request = request_for(model, options, api_key, "/chat/completions", body, copilot_headers(model, context))
        stream = await run.open(request, status_text, model)
        yield builder.start()
        reader = _ChunkReader(builder)
        async for chunk in json_events(stream, options):
            for event in reader.feed(chunk):
                yield event
        for event in reader.deltas.close():
            yield event
        if options.signal.aborted:
            raise StreamAborted()
        if reader.bad_finish is not None:
            raise FinishReasonError(f"Provider finish_reason: {reader.bad_finish}")
        stream.release()
        yield builder.done(reader.stop)
    if run.failure is not None:
        yield run.failure
