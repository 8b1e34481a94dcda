"""The Bedrock Converse request: messages as content blocks, tool results gathered into one user turn,
cache points for Claude, tools, and each model family's thinking fields (``additionalModelRequestFields``)."""

from __future__ import annotations

import json
import os
import re
from typing import Any

from pi_core.errors import ProviderError
from pi_core.llm.stream import sanitize_surrogates
from pi_core.llm.transform import sanitize_id, transform_messages
from pi_core.models.thinking import (
    adjust_max_tokens_for_thinking,
    base_max_tokens,
    clamp_thinking_level,
    thinking_budget,
)
from pi_core.providers import StreamOptions
from pi_core.types import AssistantMessage, Context, ImageContent, Model

# isort: split
from pi_core.types import TextContent, ThinkingContent, ToolCall, ToolResultMessage

EMPTY_TEXT = "<empty>"
INTERLEAVED_BETA = "interleaved-thinking-2025-05-14"
BINDING_BETA = "thinking-binding-controls-2026-08-01"
_FORMATS = {"image/jpeg": "jpeg", "image/jpg": "jpeg", "image/png": "png", "image/gif": "gif", "image/webp": "webp"}
_ADAPTIVE = ("opus-4-6", "opus-4-7", "opus-4-8", "opus-5", "sonnet-4-6", "sonnet-5", "haiku-5", "fable-5")
_BINDING = ("opus-4-7", "opus-4-8", "opus-5", "sonnet-5", "haiku-5", "fable-5")  # also the native xhigh ones
_GPT_EFFORT = {"minimal": "low", "low": "low", "medium": "medium", "high": "high", "xhigh": "xhigh", "max": "max"}
_OSS_EFFORT = {"minimal": "low", "low": "low", "medium": "medium", "high": "high", "xhigh": "high", "max": "high"}


def _names(model: Model) -> list[str]:
    """The model id and name, lower-case, also with separators as dashes (inference profile ARNs hide the id)."""
    values = [model.id, model.name] if model.name else [model.id]
    return [form for value in values for form in (value.lower(), re.sub(r"[\s_.:]+", "-", value.lower()))]


def _mentions(model: Model, needles: tuple[str, ...]) -> bool:
    return any(needle in name for name in _names(model) for needle in needles)


def is_claude(model: Model) -> bool:
    return _mentions(model, ("anthropic.claude", "anthropic/claude")) or "claude" in (model.name or "").lower()


def caches(model: Model, retention: str) -> bool:
    """Cache points for Claude 3.5 Haiku, 3.7 Sonnet, 4.x and 5 (``AWS_BEDROCK_FORCE_CACHE=1`` for inference
    profiles whose ARN hides the model); Nova caches by itself."""
    if retention == "none":
        return False
    if not _mentions(model, ("claude",)):
        return os.environ.get("AWS_BEDROCK_FORCE_CACHE") == "1"
    return _mentions(model, ("fable-5", "opus-5", "sonnet-5", "haiku-5", "-4-", "claude-3-7-sonnet", "claude-3-5-haiku"))


def _cache_point(retention: str) -> dict[str, Any]:
    return {"cachePoint": {"type": "default", **({"ttl": "1h"} if retention == "long" else {})}}


def _text(text: str) -> dict[str, Any] | None:
    clean = sanitize_surrogates(text)
    return {"text": clean} if clean.strip() else None


def _image(block: ImageContent) -> dict[str, Any]:
    fmt = _FORMATS.get(block.mime_type)
    if fmt is None:
        raise ProviderError(f"Unknown image type: {block.mime_type}", retryable=False)
    return {"image": {"format": fmt, "source": {"bytes": block.data}}}  # the REST API takes blobs as base64


def _user(content: str | list[TextContent | ImageContent]) -> dict[str, Any]:
    if isinstance(content, str):
        return {"role": "user", "content": [_text(content) or {"text": EMPTY_TEXT}]}
    blocks = [b for b in (_text(c.text) if isinstance(c, TextContent) else _image(c) for c in content) if b]
    return {"role": "user", "content": blocks or [{"text": EMPTY_TEXT}]}


def _assistant(message: AssistantMessage, model: Model) -> dict[str, Any] | None:
    blocks: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, TextContent):
            text = _text(block.text)
            if text:
                blocks.append(text)
        elif isinstance(block, ToolCall):
            blocks.append({"toolUse": {"toolUseId": block.id, "name": block.name, "input": block.arguments}})
        elif isinstance(block, ThinkingContent):
            if block.redacted:
                if block.thinking_signature:
                    blocks.append({"reasoningContent": {"redactedContent": block.thinking_signature}})
                continue
            thinking = sanitize_surrogates(block.thinking)
            if not thinking.strip():
                continue
            if not is_claude(model):  # only Claude accepts a signature on replayed reasoning
                blocks.append({"reasoningContent": {"reasoningText": {"text": thinking}}})
            elif block.thinking_signature and block.thinking_signature.strip():
                blocks.append({"reasoningContent": {"reasoningText": {"text": thinking,
                                                                      "signature": block.thinking_signature}}})
            else:
                blocks.append({"text": thinking})
    return {"role": "assistant", "content": blocks} if blocks else None


def _result(message: ToolResultMessage) -> dict[str, Any]:
    content = [b for b in (_text(c.text) if isinstance(c, TextContent) else _image(c) for c in message.content) if b]
    return {"toolResult": {"toolUseId": message.tool_call_id, "content": content or [{"text": EMPTY_TEXT}],
                           "status": "error" if message.is_error else "success"}}


def convert_messages(model: Model, context: Context, retention: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    messages = transform_messages(context.messages, model, lambda call_id, _m, _s: sanitize_id(call_id, 64))
    for message in messages:
        if isinstance(message, ToolResultMessage):
            if out and out[-1].get("_results"):  # Bedrock wants every result of a turn in one user message
                out[-1]["content"].append(_result(message))
            else:
                out.append({"role": "user", "content": [_result(message)], "_results": True})
        elif isinstance(message, AssistantMessage):
            converted = _assistant(message, model)
            if converted:
                out.append(converted)
        else:
            out.append(_user(message.content))  # type: ignore[union-attr]
    for entry in out:
        entry.pop("_results", None)
    if caches(model, retention) and out and out[-1]["role"] == "user":
        out[-1]["content"].append(_cache_point(retention))
    return out


def _tool_config(context: Context, choice: Any) -> dict[str, Any] | None:
    if not context.tools or choice == "none":
        return None
    config: dict[str, Any] = {"tools": [{"toolSpec": {"name": t.name, "description": t.description,
                                                       "inputSchema": {"json": t.parameters}}} for t in context.tools]}
    if choice in ("auto", "any"):
        config["toolChoice"] = {choice: {}}
    elif isinstance(choice, dict) and choice.get("type") == "tool" and choice.get("name"):
        config["toolChoice"] = {"tool": {"name": choice["name"]}}
    return config


def _effort(model: Model, level: str) -> str:
    if level == "xhigh" and _mentions(model, _BINDING):
        return "xhigh"
    mapped = (model.thinking_level_map or {}).get(level)
    if isinstance(mapped, str):
        return mapped
    return {"minimal": "low", "low": "low", "medium": "medium"}.get(level, "high")


def _thinking_fields(model: Model, level: str | None, options: StreamOptions, region: str,
                     budget: int | None) -> dict[str, Any] | None:
    if not level or not model.reasoning:
        return None
    if is_claude(model):
        gov = region.lower().startswith("us-gov-") or model.id.lower().startswith(("us-gov.", "arn:aws-us-gov:"))
        display = {} if gov else {"display": "summarized"}
        if _mentions(model, _ADAPTIVE):
            binding = not gov and _mentions(model, _BINDING)
            fields: dict[str, Any] = {"thinking": {"type": "adaptive", **display, **(
                {"block_binding": {"prefix_mismatch_behavior": "drop_block"}} if binding else {})},
                "output_config": {"effort": _effort(model, level)}}
            if binding:
                fields["anthropic_beta"] = [BINDING_BETA]
            return fields
        if budget is None:
            budget = thinking_budget("high" if level in ("xhigh", "max") else level, options.thinking_budgets)
        return {"thinking": {"type": "enabled", "budget_tokens": budget, **display}, "anthropic_beta": [INTERLEAVED_BETA]}
    if _mentions(model, ("gpt-oss",)):
        return {"reasoning_effort": _OSS_EFFORT.get(level, "high")}
    if _mentions(model, ("gpt-",)):
        mapped = (model.thinking_level_map or {}).get(level)
        return {"reasoning": {"effort": mapped if isinstance(mapped, str) else _GPT_EFFORT.get(level, "high")}}
    return None


def retention_of(options: StreamOptions) -> str:
    return options.cache_retention or ("long" if os.environ.get("PI_CACHE_RETENTION") == "long" else "short")


def build_body(model: Model, context: Context, options: StreamOptions, region: str) -> dict[str, Any]:
    """The ConverseStream request body (the model id goes in the URL)."""
    retention = retention_of(options)
    level = clamp_thinking_level(model, options.reasoning) if options.reasoning else None
    level = None if level == "off" else level
    max_tokens = base_max_tokens(model, options.max_tokens)
    budget = None
    if level and is_claude(model) and not _mentions(model, _ADAPTIVE) and max_tokens:
        budget_level = "high" if level in ("xhigh", "max") else level
        max_tokens, budget = adjust_max_tokens_for_thinking(max_tokens, model.max_tokens, budget_level,
                                                            options.thinking_budgets)
    body: dict[str, Any] = {"messages": convert_messages(model, context, retention)}
    if context.system_prompt:
        system: list[dict[str, Any]] = [{"text": sanitize_surrogates(context.system_prompt)}]
        if caches(model, retention):
            system.append(_cache_point(retention))
        body["system"] = system
    inference: dict[str, Any] = {}
    if max_tokens:
        inference["maxTokens"] = max_tokens
    if options.temperature is not None:
        inference["temperature"] = options.temperature
    body["inferenceConfig"] = inference
    tools = _tool_config(context, options.tool_choice)
    if tools:
        body["toolConfig"] = tools
    extra = _thinking_fields(model, level, options, region, budget)
    if extra:
        body["additionalModelRequestFields"] = extra
    return body


def dumps(body: dict[str, Any]) -> bytes:
    """The exact bytes that are signed and sent."""
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
