"""The Mistral chat request: messages in Mistral's shape (thinking chunks, 9-character tool call ids, tool
names on results, ``[tool error]`` marks), tools, and Mistral's reasoning and caching fields."""

from __future__ import annotations

import json
from typing import Any

from pi_plugins.openai_completions.convert import mistral_id_normalizer

from pi_core.llm.stream import sanitize_surrogates
from pi_core.llm.transform import transform_messages
from pi_core.models.thinking import base_max_tokens, clamp_thinking_level
from pi_core.providers import StreamOptions
from pi_core.types import AssistantMessage, Context, ImageContent, Model

# isort: split
from pi_core.types import TextContent, ThinkingContent, ToolCall, ToolResultMessage

IMAGE_OMITTED = "(image omitted: model does not support images)"


def caching(options: StreamOptions) -> bool:
    return options.cache_retention != "none" and bool(options.session_id)


def _image(block: ImageContent) -> dict[str, Any]:
    return {"type": "image_url", "image_url": f"data:{block.mime_type};base64,{block.data}"}


def _user(content: str | list[TextContent | ImageContent], images: bool) -> dict[str, Any] | None:
    if isinstance(content, str):
        return {"role": "user", "content": sanitize_surrogates(content)}
    parts = [{"type": "text", "text": sanitize_surrogates(b.text)} if isinstance(b, TextContent) else _image(b)
             for b in content if isinstance(b, TextContent) or images]
    if parts:
        return {"role": "user", "content": parts}
    if any(isinstance(b, ImageContent) for b in content):
        return {"role": "user", "content": IMAGE_OMITTED}
    return None


def _assistant(message: AssistantMessage) -> dict[str, Any] | None:
    parts: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, TextContent) and block.text.strip():
            parts.append({"type": "text", "text": sanitize_surrogates(block.text)})
        elif isinstance(block, ThinkingContent) and block.thinking.strip():
            parts.append({"type": "thinking", "thinking": [{"type": "text", "text": sanitize_surrogates(block.thinking)}]})
        elif isinstance(block, ToolCall):
            calls.append({"id": block.id, "type": "function", "index": 0, "function": {
                "name": block.name, "arguments": json.dumps(block.arguments, ensure_ascii=False, separators=(",", ":"))}})
    if not parts and not calls:
        return None
    out: dict[str, Any] = {"role": "assistant", "prefix": False}
    if parts:
        out["content"] = parts
    if calls:
        out["tool_calls"] = calls
    return out


def _result_text(message: ToolResultMessage, images: bool) -> str:
    text = "\n".join(sanitize_surrogates(b.text) for b in message.content if isinstance(b, TextContent)).strip()
    has_images = any(isinstance(b, ImageContent) for b in message.content)
    mark = "[tool error] " if message.is_error else ""
    if text:
        return f"{mark}{text}" + ("\n[tool image omitted: model does not support images]" if has_images and not images
                                  else "")
    if has_images:
        return mark + ("(see attached image)" if images else IMAGE_OMITTED)
    return mark + "(no tool output)"


def _in_order(message: ToolResultMessage) -> list[dict[str, Any]]:
    """Text and images in the tool's order ("the image above …"); adjacent texts join, the first is marked
    as an error when the result is one."""
    content: list[dict[str, Any]] = []
    mark = "[tool error] " if message.is_error else ""
    for block in message.content:
        if isinstance(block, ImageContent):
            content.append(_image(block))
        elif block.text.strip() and content and content[-1]["type"] == "text":
            content[-1]["text"] += "\n" + sanitize_surrogates(block.text)
        elif block.text.strip():
            content.append({"type": "text", "text": mark + sanitize_surrogates(block.text)})
            mark = ""
    return content


def _tool_result(message: ToolResultMessage, images: bool) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": _result_text(message, images)}]
    if images and any(isinstance(b, ImageContent) for b in message.content) \
            and any(isinstance(b, TextContent) and b.text.strip() for b in message.content):
        content = _in_order(message)
    elif images:
        content.extend(_image(b) for b in message.content if isinstance(b, ImageContent))
    return {"role": "tool", "tool_call_id": message.tool_call_id, "name": message.tool_name, "content": content}


def convert_messages(model: Model, context: Context) -> list[dict[str, Any]]:
    images = "image" in model.input
    out: list[dict[str, Any]] = []
    if context.system_prompt:
        out.append({"role": "system", "content": sanitize_surrogates(context.system_prompt)})
    for message in transform_messages(context.messages, model, mistral_id_normalizer()):
        converted: dict[str, Any] | None
        if isinstance(message, AssistantMessage):
            converted = _assistant(message)
        elif isinstance(message, ToolResultMessage):
            converted = _tool_result(message, images)
        else:
            converted = _user(message.content, images)  # type: ignore[union-attr]
        if converted is not None:
            out.append(converted)
    return out


def _tool_choice(choice: Any) -> Any:
    if choice in ("auto", "none", "any", "required"):
        return choice
    name = (choice.get("function") or {}).get("name") if isinstance(choice, dict) else None
    return {"type": "function", "function": {"name": name}} if name else None


def reasoning_fields(model: Model, options: StreamOptions) -> dict[str, str]:
    """Models with a thinking-level map take ``reasoning_effort`` (off: the map's word for off, if any);
    other reasoning models take ``prompt_mode: reasoning`` while thinking is on."""
    level = clamp_thinking_level(model, options.reasoning) if options.reasoning else "off"
    on = level != "off"
    effort_map = model.thinking_level_map if model.reasoning else None
    if effort_map is not None:
        effort = (effort_map.get(level) or "high") if on else effort_map.get("off")
        return {"reasoning_effort": effort} if effort else {}
    return {"prompt_mode": "reasoning"} if model.reasoning and on else {}


def build_body(model: Model, context: Context, options: StreamOptions) -> dict[str, Any]:
    body: dict[str, Any] = {"model": model.id, "stream": True, "messages": convert_messages(model, context)}
    if context.tools:
        body["tools"] = [{"type": "function", "function": {"name": t.name, "description": t.description,
                                                           "parameters": t.parameters, "strict": False}}
                         for t in context.tools]
    if options.temperature is not None:
        body["temperature"] = options.temperature
    max_tokens = base_max_tokens(model, options.max_tokens)
    if max_tokens:
        body["max_tokens"] = max_tokens
    choice = _tool_choice(options.tool_choice) if options.tool_choice else None
    if choice is not None:
        body["tool_choice"] = choice
    body.update(reasoning_fields(model, options))
    if caching(options):
        body["prompt_cache_key"] = options.session_id
    return body
