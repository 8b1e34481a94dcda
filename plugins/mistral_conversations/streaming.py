"""Stream one Mistral chat request over pi's SSE transport and turn its chunks into pi events.

Mistral's chunks look like Chat Completions chunks, but ``delta.content`` may be a list of chunks
(``text``, and ``thinking`` holding text parts), usage arrives on the chunk with the finish reason, and a
finish reason of ``error`` is a transient server failure.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from pi_plugins._streaming import (
    DeltaStream,
    StreamAborted,
    StreamRun,
    apply_payload_hook,
    new_builder,
    reported_stop,
    required_key,
)
from pi_plugins.mistral_conversations.convert import build_body, caching

from pi_core.errors import ProviderError
from pi_core.llm.stream import MessageBuilder, sanitize_surrogates
from pi_core.llm.transport import WireRequest
from pi_core.providers import StreamOptions
from pi_core.types import AssistantMessageEvent, Context, Model, StopReason

DEFAULT_BASE_URL = "https://api.mistral.ai"
MAX_ERROR_BODY = 4000
_STOPS: dict[str, StopReason] = {"stop": "stop", "length": "length", "model_length": "length", "tool_calls": "toolUse"}


def status_text(status: int, body: str) -> str:
    """``Mistral API error (429): {body}``, the body cut at 4000 characters."""
    if not body:
        return f"Mistral API error ({status}): status code {status} (no body)"
    shown = body if len(body) <= MAX_ERROR_BODY else body[:MAX_ERROR_BODY] + "…"
    return f"Mistral API error ({status}): {shown}"


def request_for(model: Model, options: StreamOptions, api_key: str, body: dict[str, Any]) -> WireRequest:
    base = (model.base_url or DEFAULT_BASE_URL).rstrip("/")
    headers = {"accept": "text/event-stream", "authorization": f"Bearer {api_key}"}
    headers.update(model.headers or {})
    headers.update(options.headers or {})
    if caching(options) and not any(name.lower() == "x-affinity" for name in headers):
        assert options.session_id is not None
        headers["x-affinity"] = options.session_id  # keeps a session on the replica that holds its cache
    path = "/chat/completions" if base.endswith("/v1") else "/v1/chat/completions"  # a root given with /v1 too
    return WireRequest(model.provider, f"{base}{path}", headers, body)


class _ChunkReader:
    def __init__(self, builder: MessageBuilder) -> None:
        self.builder = builder
        self.deltas = DeltaStream(builder)
        self.tools: dict[Any, int] = {}  # tool call index (or id) -> content index
        self.stop: StopReason | None = None
        self.stop_text: str | None = None

    def feed(self, chunk: dict[str, Any]) -> list[AssistantMessageEvent]:
        message = self.builder.message
        if not message.response_id and chunk.get("id"):
            message.response_id = chunk["id"]
        usage = chunk.get("usage")
        if usage:
            prompt = usage.get("prompt_tokens") or 0
            cached = _cached_tokens(usage, prompt)
            input_tokens, output = max(0, prompt - cached), usage.get("completion_tokens") or 0
            self.builder.set_usage(input=input_tokens, output=output, cache_read=cached, cache_write=0,
                                   total_tokens=usage.get("total_tokens") or input_tokens + output + cached)
        choice = (chunk.get("choices") or [None])[0]
        if not isinstance(choice, dict):
            return []
        reason = choice.get("finish_reason")
        if reason:
            self.stop = _STOPS.get(reason, "error")
            if self.stop == "error":
                self.stop_text = ("Provider stopped with: error (server error)" if reason == "error"
                                  else f"Provider stopped with: {reason}")
        delta = choice.get("delta") or {}
        events = self._content(delta.get("content"))
        for call in delta.get("tool_calls") or []:
            events.extend(self._tool_call(call))
        return events

    def _content(self, content: Any) -> list[AssistantMessageEvent]:
        if content is None:
            return []
        events: list[AssistantMessageEvent] = []
        for item in [content] if isinstance(content, str) else content:
            if isinstance(item, str):
                text = sanitize_surrogates(item)
                if text:  # some models send empty deltas around thinking: they must not split a block
                    events.extend(self.deltas.text(text))
            elif isinstance(item, dict) and item.get("type") == "thinking":
                text = sanitize_surrogates("".join(part.get("text") or "" for part in item.get("thinking") or []))
                if text:
                    events.extend(self.deltas.thinking(text))
            elif isinstance(item, dict) and item.get("type") == "text":
                text = sanitize_surrogates(item.get("text") or "")
                if text:
                    events.extend(self.deltas.text(text))
        return events

    def _tool_call(self, call: dict[str, Any]) -> list[AssistantMessageEvent]:
        function = call.get("function") or {}
        call_id = call.get("id") if call.get("id") not in (None, "", "null") else None
        key = call.get("index") if call.get("index") is not None else call_id
        arguments = function.get("arguments")
        delta = arguments if isinstance(arguments, str) else json.dumps(arguments or {}, separators=(",", ":"))
        events: list[AssistantMessageEvent] = []
        if key not in self.tools:
            events.extend(self.deltas.close())
            start = self.builder.toolcall_start(call_id or f"toolcall{call.get('index') or 0}"[:9], function.get("name") or "")
            assert start.content_index is not None
            self.tools[key] = start.content_index
            events.append(start)
        events.append(self.builder.toolcall_delta(self.tools[key], delta))
        return events

    def finish(self) -> list[AssistantMessageEvent]:
        events = self.deltas.close()
        events.extend(self.builder.toolcall_end(index) for index in self.tools.values())
        return events


def _cached_tokens(usage: dict[str, Any], prompt: int) -> int:
    for holder, key in (("prompt_tokens_details", "cached_tokens"), ("prompt_token_details", "cached_tokens")):
        details = usage.get(holder)
        if isinstance(details, dict) and isinstance(details.get(key), (int, float)):
            return int(min(prompt, max(0, details[key])))
    value = usage.get("num_cached_tokens")
    return int(min(prompt, max(0, value))) if isinstance(value, (int, float)) else 0


async def stream_mistral(model: Model, context: Context, options: StreamOptions) -> AsyncIterator[AssistantMessageEvent]:
    builder = new_builder(model)
    run = StreamRun(builder, options)
    async with run:
        api_key = required_key(model, options)
        body = await apply_payload_hook(build_body(model, context, options), model, options)
        stream = await run.open(request_for(model, options, api_key, body), status_text, model)
        yield builder.start()
        reader = _ChunkReader(builder)
        async for sse in stream:
            data = sse.data.strip()
            if not data:
                continue
            if data == "[DONE]":
                break
            chunk = json.loads(data)
            if not isinstance(chunk, dict) or not isinstance(chunk.get("choices"), list):
                raise ProviderError("Invalid Mistral streaming event", retryable=None)
            for event in reader.feed(chunk):
                yield event
        for event in reader.finish():
            yield event
        if options.signal.aborted:
            raise StreamAborted()
        stop = reported_stop(reader, "Mistral stream ended without a finish reason", _stream_error)
        if stop == "stop" and builder.message.tool_calls():
            stop = "toolUse"
        stream.release()
        yield builder.done(stop)
    if run.failure is not None:
        yield run.failure


def _stream_error(text: str) -> ProviderError:
    return ProviderError(text, retryable=None)  # judged by its text, as the stream's own errors are
