"""The ``custom-anthropic-api`` wire: a plain Anthropic Messages request over pi's SSE transport, read into pi's
stream events with ``MessageBuilder`` (a simpler cousin of pi's own anthropic-messages provider)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from pi_core.llm.stream import MessageBuilder, sanitize_surrogates
from pi_core.llm.transport import WireRequest, open_sse
from pi_core.providers import StreamOptions, resolved
from pi_core.types import (
    AssistantMessage,
    AssistantMessageEvent,
    Context,
    ImageContent,
    Model,
    StopReason,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

API = "custom-anthropic-api"
BETAS = "fine-grained-tool-streaming-2025-05-14,interleaved-thinking-2025-05-14"
BUDGETS = {"minimal": 1024, "low": 4096, "medium": 10240, "high": 20480}
STOP_REASONS: dict[str, StopReason] = {"end_turn": "stop", "pause_turn": "stop", "stop_sequence": "stop",
                                       "max_tokens": "length", "tool_use": "toolUse"}


def content_blocks(content: str | list[Any]) -> str | list[dict[str, Any]]:
    if isinstance(content, str):
        return sanitize_surrogates(content)
    if not any(isinstance(part, ImageContent) for part in content):
        return sanitize_surrogates("\n".join(part.text for part in content if isinstance(part, TextContent)))
    return [{"type": "image", "source": {"type": "base64", "media_type": part.mime_type, "data": part.data}}
            if isinstance(part, ImageContent) else {"type": "text", "text": sanitize_surrogates(part.text)}
            for part in content]


def assistant_blocks(message: AssistantMessage) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for part in message.content:
        if isinstance(part, TextContent) and part.text.strip():
            blocks.append({"type": "text", "text": sanitize_surrogates(part.text)})
        elif isinstance(part, ThinkingContent) and part.thinking_signature and not part.redacted:
            blocks.append({"type": "thinking", "thinking": part.thinking, "signature": part.thinking_signature})
        elif isinstance(part, ToolCall):
            blocks.append({"type": "tool_use", "id": part.id, "name": part.name, "input": part.arguments})
    return blocks


def messages(context: Context) -> list[dict[str, Any]]:
    """Anthropic's turns: consecutive tool results travel together in one user turn."""
    out: list[dict[str, Any]] = []
    for message in context.messages:
        if isinstance(message, UserMessage):
            out.append({"role": "user", "content": content_blocks(message.content)})
        elif isinstance(message, AssistantMessage):
            blocks = assistant_blocks(message)
            if blocks:
                out.append({"role": "assistant", "content": blocks})
        elif isinstance(message, ToolResultMessage):
            result = {"type": "tool_result", "tool_use_id": message.tool_call_id,
                      "content": content_blocks(message.content) or "(no output)", "is_error": message.is_error}
            last = out[-1] if out else None
            if last and last["role"] == "user" and isinstance(last["content"], list) and \
                    all(block.get("type") == "tool_result" for block in last["content"]):
                last["content"].append(result)
            else:
                out.append({"role": "user", "content": [result]})
    return out


def payload(model: Model, context: Context, options: StreamOptions) -> dict[str, Any]:
    body: dict[str, Any] = {"model": model.id, "messages": messages(context), "stream": True,
                            "max_tokens": options.max_tokens or model.max_tokens // 3}
    if context.system_prompt:
        body["system"] = [{"type": "text", "text": sanitize_surrogates(context.system_prompt),
                           "cache_control": {"type": "ephemeral"}}]
    if context.tools:
        body["tools"] = [{"name": tool.name, "description": tool.description,
                          "input_schema": {"type": "object", "properties": tool.parameters.get("properties", {}),
                                           "required": tool.parameters.get("required", [])}}
                         for tool in context.tools]
    if options.reasoning and model.reasoning:
        budget = (options.thinking_budgets or {}).get(options.reasoning) or BUDGETS.get(options.reasoning, 10240)
        body["thinking"] = {"type": "enabled", "budget_tokens": budget}
    return body


class CustomAnthropicProvider:
    api = API

    async def stream(self, model: Model, context: Context, options: StreamOptions) -> AsyncIterator[AssistantMessageEvent]:
        builder = MessageBuilder(model)
        sse = None
        try:
            # The preset names the variable; unset, pi hands over the name itself: that is no key.
            if not options.api_key or options.api_key == "CUSTOM_ANTHROPIC_API_KEY":
                raise RuntimeError(f"No API key for provider: {model.provider}")
            body = payload(model, context, options)
            if options.on_payload is not None:
                body = await resolved(options.on_payload(body, model)) or body
            headers = {"x-api-key": options.api_key, "anthropic-version": "2023-06-01", "accept": "application/json",
                       "anthropic-dangerous-direct-browser-access": "true", "anthropic-beta": BETAS,
                       "content-type": "application/json", **(options.headers or {})}
            url = model.base_url.rstrip("/") + "/v1/messages"
            sse = await open_sse(WireRequest(model.provider, url, headers, body), options)
            yield builder.start()
            reason: StopReason | None = None
            blocks: dict[int, int] = {}  # Anthropic's block index -> pi's content index
            async for frame in sse:
                if not frame.data or frame.event == "ping":
                    continue
                event = json.loads(frame.data)
                kind = event.get("type")
                if kind == "error":
                    raise RuntimeError(frame.data)
                if kind == "message_start":
                    usage = event["message"].get("usage", {})
                    builder.set_usage(input=usage.get("input_tokens", 0), output=usage.get("output_tokens", 0),
                                      cache_read=usage.get("cache_read_input_tokens", 0),
                                      cache_write=usage.get("cache_creation_input_tokens", 0))
                elif kind == "content_block_start":
                    block = event["content_block"]
                    if block["type"] == "text":
                        started = builder.text_start()
                    elif block["type"] == "thinking":
                        started = builder.thinking_start()
                    elif block["type"] == "tool_use":
                        started = builder.toolcall_start(block["id"], block["name"])
                    else:
                        continue
                    blocks[event["index"]] = started.content_index or 0
                    yield started
                elif kind == "content_block_delta" and event["index"] in blocks:
                    index, delta = blocks[event["index"]], event["delta"]
                    if delta["type"] == "text_delta":
                        yield builder.text_delta(index, delta["text"])
                    elif delta["type"] == "thinking_delta":
                        yield builder.thinking_delta(index, delta["thinking"])
                    elif delta["type"] == "input_json_delta":
                        yield builder.toolcall_delta(index, delta["partial_json"])
                    elif delta["type"] == "signature_delta":
                        builder.add_thinking_signature(index, delta["signature"])
                elif kind == "content_block_stop" and event["index"] in blocks:
                    index = blocks.pop(event["index"])
                    part = builder.message.content[index]
                    if isinstance(part, TextContent):
                        yield builder.text_end(index)
                    elif isinstance(part, ThinkingContent):
                        yield builder.thinking_end(index)
                    else:
                        yield builder.toolcall_end(index)
                elif kind == "message_delta":
                    stop = event.get("delta", {}).get("stop_reason")
                    if stop:
                        reason = STOP_REASONS.get(stop, "error")
                    usage = event.get("usage", {})
                    builder.set_usage(input=usage.get("input_tokens"), output=usage.get("output_tokens"),
                                      cache_read=usage.get("cache_read_input_tokens"),
                                      cache_write=usage.get("cache_creation_input_tokens"))
            if options.signal.aborted:
                raise RuntimeError("Request was aborted")
            if reason is None:
                raise RuntimeError("Anthropic stream ended without a stop reason")
            if reason == "error":
                raise RuntimeError("An unknown error occurred")
            yield builder.done(reason)
        except Exception as exc:  # noqa: BLE001 - the provider contract: every failure ends in one error event
            yield builder.error(exc, aborted=options.signal.aborted)
        finally:
            if sse is not None:
                await sse.aclose()
