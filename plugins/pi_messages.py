"""pi-messages: Pi's own message protocol (the Radius gateway): the context goes out as Pi's JSON, events come back.

One POST of ``{"model", "context", "options"}`` to ``{baseUrl}/messages``; the answer is an SSE stream whose
``data`` lines are Pi's assistant-message events (``text_delta`` with a ``contentIndex``, ``toolcall_end``
with the finished call, ...) ending with ``done`` or ``error``. Any backend that speaks it can be used through
a models.json provider with ``"api": "pi-messages"``.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from typing import Any

from pi_core import hookimpl
from pi_core.errors import ProviderError
from pi_core.providers import StreamOptions
from pi_core.types import AssistantMessage, AssistantMessageEvent, Context, Model

# isort: split
from pi_core.types import TextContent, ThinkingContent, ToolCall, Usage

_STARTS = ("text_start", "thinking_start", "toolcall_start")
_CONTENT_EVENTS = frozenset({*_STARTS, "text_delta", "text_end", "thinking_delta", "thinking_end", "toolcall_delta",
                             "toolcall_end"})


class PiMessagesError(ProviderError):
    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message, status=status, retryable=None)


def status_text(status: int, body: str) -> str:
    """``401 Unauthorized: {error.message or body} ({error.code})``."""
    from http import HTTPStatus  # on an error answer, not at start

    try:
        phrase = HTTPStatus(status).phrase
    except ValueError:
        phrase = ""
    try:
        parsed = json.loads(body) if body else None
    except ValueError:
        parsed = None
    error = parsed.get("error") if isinstance(parsed, dict) else None
    error = error if isinstance(error, dict) else {}
    message, code = error.get("message"), error.get("code")
    suffix = message if isinstance(message, str) else body
    return f"{status} {phrase}: {suffix}" + (f" ({code})" if isinstance(code, str) and code else "")


def build_body(model: Model, context: Context, options: StreamOptions) -> dict[str, Any]:
    retention = options.cache_retention or ("long" if os.environ.get("PI_CACHE_RETENTION") == "long" else None)
    settings = {"temperature": options.temperature, "maxTokens": options.max_tokens, "reasoning": options.reasoning,
                "cacheRetention": retention, "sessionId": options.session_id, "toolChoice": options.tool_choice}
    return {"model": model.id, "context": context.to_json(),
            "options": {key: value for key, value in settings.items() if value is not None}}


class _Replay:
    """Rebuilds the answer from the backend's events, checking each one against what came before."""

    def __init__(self, model: Model) -> None:
        from pi_core.llm.stream import MessageBuilder

        message = AssistantMessage(api=model.api, provider=model.provider, model=model.id, usage=Usage(total_tokens=0))
        self.builder = MessageBuilder(model, message, interleaved=True)
        self.model = model
        self.final: AssistantMessageEvent | None = None

    def feed(self, event: dict[str, Any]) -> list[AssistantMessageEvent]:
        kind = event.get("type")
        if kind in ("done", "error"):
            self._finish(event)
            return []
        if kind not in _CONTENT_EVENTS:
            return []  # "start" and anything newer: nothing to rebuild
        builder, message = self.builder, self.builder.message
        index = event.get("contentIndex")
        # The index addresses the content list: a start adds the next block, the others need an existing one.
        limit = len(message.content) if kind in _STARTS else len(message.content) - 1
        if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index <= limit:
            raise PiMessagesError(f"Invalid contentIndex {json.dumps(index)} in pi-messages {kind} event")
        block = message.content[index] if index < len(message.content) else None
        delta = str(event.get("delta") or "")
        if kind == "text_start":
            return [builder.text_start()]
        if kind == "thinking_start":
            return [builder.thinking_start()]
        if kind == "toolcall_start":
            return [builder.toolcall_start(str(event.get("id") or ""), str(event.get("toolName") or ""))]
        if kind == "text_delta":
            return [builder.text_delta(index, delta)]
        if kind == "thinking_delta":
            return [builder.thinking_delta(index, delta)]
        if kind == "toolcall_delta":
            return [builder.toolcall_delta(index, delta)]
        if kind == "text_end":
            if isinstance(block, TextContent) and isinstance(event.get("content"), str):
                block.text = event["content"]
            return [builder.text_end(index, event.get("contentSignature"))]
        if kind == "thinking_end":
            if isinstance(block, ThinkingContent):
                if isinstance(event.get("content"), str):
                    block.thinking = event["content"]
                block.thinking_signature = event.get("contentSignature")
                block.redacted = event.get("redacted")
            return [builder.thinking_end(index)]
        call = ToolCall.model_validate(event.get("toolCall") or {"id": "", "name": ""})  # toolcall_end
        if isinstance(block, ToolCall):
            block.id, block.name = call.id or block.id, call.name or block.name
            block.thought_signature = call.thought_signature
        return [builder.toolcall_end(index, call.arguments)]

    def _finish(self, event: dict[str, Any]) -> None:
        message = self.builder.message
        if isinstance(event.get("usage"), dict):
            message.usage = Usage.model_validate(event["usage"])
        if event.get("responseId"):
            message.response_id = event["responseId"]
        for key in ("responseModel", "providerThinkingLevel"):
            if event.get(key) is not None:
                setattr(message, key, event[key])
        reason = event.get("reason")
        if event.get("type") == "done":
            self.final = self.builder.done(reason if reason in ("stop", "length", "toolUse") else "stop")
        else:
            text = event.get("errorMessage") or "An unknown error occurred"
            self.final = self.builder.error(PiMessagesError(str(text)), aborted=reason == "aborted")


class PiMessagesProvider:
    api = "pi-messages"

    async def stream(self, model: Model, context: Context, options: StreamOptions) -> AsyncIterator[AssistantMessageEvent]:
        from pi_plugins._streaming import StreamAborted, StreamRun, apply_payload_hook

        from pi_core.llm.transport import WireRequest

        replay = _Replay(model)
        run = StreamRun(replay.builder, options)
        async with run:
            if not options.api_key:
                raise ProviderError(f'No API key provided for provider "{model.provider}"', retryable=False)
            body = await apply_payload_hook(build_body(model, context, options), model, options)
            headers = {"authorization": f"Bearer {options.api_key}", **(model.headers or {}), **(options.headers or {})}
            url = model.base_url.rstrip("/") + "/messages"
            stream = await run.open(WireRequest(model.provider, url, headers, body), status_text, model)
            yield replay.builder.start()
            async for sse in stream:
                data = sse.data.strip()
                if not data or data == "[DONE]":
                    continue
                event = json.loads(data)
                for out in replay.feed(event if isinstance(event, dict) else {}):
                    yield out
                if replay.final is not None:
                    stream.release()
                    yield replay.final
                    return
            if options.signal.aborted:
                raise StreamAborted()
            raise PiMessagesError(f"{model.provider} stream ended without a terminal event")
        if run.failure is not None:
            yield run.failure


PROVIDER = PiMessagesProvider()


@hookimpl
def pi_providers() -> list[PiMessagesProvider]:
    return [PROVIDER]
