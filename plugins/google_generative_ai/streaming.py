"""Stream one Gemini request over pi's SSE transport and translate its chunks into pi events."""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import quote

from pi_plugins._streaming import DeltaStream, StreamAborted, StreamRun, apply_payload_hook

# isort: split
from pi_plugins._streaming import new_builder, required_key, without_client_retries
from pi_plugins.google_generative_ai.convert import build_body

from pi_core.errors import ProviderError
from pi_core.llm.stream import UNKNOWN_ERROR_TEXT, MessageBuilder
from pi_core.llm.transport import WireRequest
from pi_core.providers import StreamOptions
from pi_core.types import AssistantMessageEvent, Context, Model, StopReason

DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com/v1beta"
_ids = itertools.count(1)


class FinishError(Exception):
    pass


def status_text(status: int, body: str) -> str:
    """``{status} {body}``, the body compacted when it is JSON (Google's ``{"error": {...}}``)."""
    text = body.strip()
    try:
        text = json.dumps(json.loads(text), separators=(",", ":"))
    except ValueError:
        pass
    return f"{status} {text}" if text else f"{status} status code (no body)"


def _retryable_status(status: int | None) -> bool:
    return status is not None and (status in (408, 409, 429) or status >= 500)


def _parse_chunk(payload: str) -> dict[str, Any]:
    try:
        chunk = json.loads(payload)
    except ValueError as err:
        raise ProviderError(f"Invalid JSON in Gemini stream: {payload[:200]}") from err
    if isinstance(chunk, dict) and isinstance(chunk.get("error"), dict):
        error = chunk["error"]
        status = error.get("code") if isinstance(error.get("code"), int) else None
        raise ProviderError(f"{status or ''} {json.dumps(chunk, separators=(',', ':'))}".strip(), status=status,
                            retryable=_retryable_status(status))
    return chunk if isinstance(chunk, dict) else {}


class _ChunkReader:
    def __init__(self, builder: MessageBuilder) -> None:
        self.builder = builder
        self.deltas = DeltaStream(builder)
        self.finish: str | None = None
        self.chunks = 0

    def feed(self, chunk: dict[str, Any]) -> list[AssistantMessageEvent]:
        self.chunks += 1
        events: list[AssistantMessageEvent] = []
        candidate = (chunk.get("candidates") or [{}])[0] or {}
        for part in (candidate.get("content") or {}).get("parts") or []:
            signature = part.get("thoughtSignature") or None
            if "text" in part and part["text"] is not None:
                if part.get("thought") is True:
                    events += self.deltas.thinking(part["text"])
                    self._keep_signature(signature, "thinking_signature")
                else:
                    events += self.deltas.text(part["text"])
                    self._keep_signature(signature, "text_signature")
            if part.get("functionCall"):
                events += self._function_call(part["functionCall"], signature)
        if candidate.get("finishReason"):
            self.finish = candidate["finishReason"]
        usage = chunk.get("usageMetadata")
        if usage:
            cached = usage.get("cachedContentTokenCount") or 0
            self.builder.set_usage(
                input=max(0, (usage.get("promptTokenCount") or 0) - cached),
                output=(usage.get("candidatesTokenCount") or 0) + (usage.get("thoughtsTokenCount") or 0),
                cache_read=cached, cache_write=0, total_tokens=usage.get("totalTokenCount") or 0)
        return events

    def _keep_signature(self, signature: str | None, field: str) -> None:
        # Some backends send the signature only on the first delta of a part: never overwrite it with None.
        if signature and self.deltas.index is not None:
            setattr(self.builder.message.content[self.deltas.index], field, signature)

    def _function_call(self, call: dict[str, Any], signature: str | None) -> list[AssistantMessageEvent]:
        name = call.get("name") or ""
        given = call.get("id")
        taken = {c.id for c in self.builder.message.tool_calls()}
        call_id = given if given and given not in taken else f"{name}_{int(time.time() * 1000)}_{next(_ids)}"
        raw_args = call.get("args")
        args: dict[str, Any] = raw_args if isinstance(raw_args, dict) else {}
        return self.deltas.whole_tool_call(call_id, name, args, signature)

    def stop_reason(self) -> StopReason:
        reasons: dict[str, StopReason] = {"STOP": "stop", "MAX_TOKENS": "length"}
        reason: StopReason = reasons.get(self.finish or "STOP", "error")
        if self.builder.message.tool_calls():
            return "toolUse"
        return reason


def _url(model: Model) -> str:
    base = (model.base_url or DEFAULT_BASE_URL).rstrip("/")
    return f"{base}/models/{quote(model.id, safe='')}:streamGenerateContent?alt=sse"


async def stream_google(model: Model, context: Context, options: StreamOptions) -> AsyncIterator[AssistantMessageEvent]:
    builder = new_builder(model)
    options = without_client_retries(options)  # Google's own client never retried
    run = StreamRun(builder, options)
    async with run:
        api_key = required_key(model, options)
        body = await apply_payload_hook(build_body(model, context, options), model, options)
        own = {**(model.headers or {}), **(options.headers or {})}
        # A Bearer credential (Vertex's ADC token, a gateway's header) is the request's key: no API key beside it.
        headers = own if any(name.lower() == "authorization" for name in own) else {"x-goog-api-key": api_key, **own}
        stream = await run.open(WireRequest(model.provider, _url(model), headers, body), status_text, model)
        yield builder.start()
        reader = _ChunkReader(builder)
        async for sse in stream:
            if sse.data:
                for event in reader.feed(_parse_chunk(sse.data)):
                    yield event
        for event in reader.deltas.close():
            yield event
        if options.signal.aborted:
            raise StreamAborted()
        if reader.chunks == 0:
            raise ProviderError("Gemini stream ended without any data", retryable=True)
        reason = reader.stop_reason()
        if reason == "error":
            raise FinishError(UNKNOWN_ERROR_TEXT)
        yield builder.done(reason)
    if run.failure is not None:
        yield run.failure
