"""Build the Gemini ``streamGenerateContent`` request body from a pi Context (docs/providers.md#request-bodies)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from pi_core.llm.incremental import Prefixes, cut_before_standalone_turn
from pi_core.llm.stream import sanitize_surrogates
from pi_core.llm.transform import tool_result_text, transform_messages
from pi_core.models.thinking import base_max_tokens, clamp_thinking_level
from pi_core.providers import StreamOptions
from pi_core.types import AssistantMessage, Context, ImageContent, Message, Model

# isort: split
from pi_core.types import TextContent, ThinkingContent, ToolCall, ToolDefinition, ToolResultMessage

SKIP_SIGNATURE = "skip_thought_signature_validator"
TOOL_IMAGE_TEXT = "Tool result image:"
SEE_IMAGE_TEXT = "(see attached image)"
_BASE64 = re.compile(r"^[A-Za-z0-9+/]+={0,2}$")
_TOOL_CHOICE = {"auto": "AUTO", "none": "NONE", "any": "ANY"}
_BUDGETS = (  # id substring -> minimal/low/medium/high budgets; first match wins
    ("2.5-pro", (128, 2048, 8192, 32768)),
    ("2.5-flash-lite", (512, 2048, 8192, 24576)),
    ("2.5-flash", (128, 2048, 8192, 24576)),
)


def requires_tool_call_id(model_id: str) -> bool:
    """Claude and gpt-oss served through Google's API need explicit call ids on calls and results."""
    return model_id.startswith(("claude-", "gpt-oss-"))


def _valid_signature(signature: str | None) -> bool:
    return signature is not None and bool(signature) and len(signature) % 4 == 0 and bool(_BASE64.match(signature))


def _inline(block: ImageContent) -> dict[str, Any]:
    return {"inlineData": {"mimeType": block.mime_type, "data": block.data}}


def _user_parts(content: str | list[TextContent | ImageContent]) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"text": sanitize_surrogates(content)}]
    return [{"text": sanitize_surrogates(b.text)} if isinstance(b, TextContent) else _inline(b) for b in content]


def _model_parts(message: AssistantMessage, model: Model) -> list[dict[str, Any]]:
    same = message.provider == model.provider and message.model == model.id
    gemini3 = "gemini-3" in model.id.lower()
    parts: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, TextContent):
            if not block.text.strip():
                continue
            part: dict[str, Any] = {"text": sanitize_surrogates(block.text)}
            if same and _valid_signature(block.text_signature):
                part["thoughtSignature"] = block.text_signature
            parts.append(part)
        elif isinstance(block, ThinkingContent):
            if not block.thinking.strip():
                continue
            part = {"text": sanitize_surrogates(block.thinking)}
            if same:
                part = {"thought": True, **part}
                if _valid_signature(block.thinking_signature):
                    part["thoughtSignature"] = block.thinking_signature
            parts.append(part)
        elif isinstance(block, ToolCall):
            call: dict[str, Any] = {"name": block.name, "args": block.arguments or {}}
            if requires_tool_call_id(model.id):
                call["id"] = block.id
            part = {"functionCall": call}
            signature = block.thought_signature if same and _valid_signature(block.thought_signature) else None
            # Gemini 3 rejects replayed calls without a signature; this sentinel skips the check.
            signature = signature or (SKIP_SIGNATURE if gemini3 else None)
            if signature:
                part["thoughtSignature"] = signature
            parts.append(part)
    return parts


def _function_response(message: ToolResultMessage, model: Model, contents: list[dict[str, Any]]) -> None:
    text = tool_result_text(message.content, SEE_IMAGE_TEXT)  # the images go in parts of their own
    images = [b for b in message.content if isinstance(b, ImageContent)] if "image" in model.input else []
    value = sanitize_surrogates(text) if text else (SEE_IMAGE_TEXT if images else "")
    multimodal = "gemini-3" in model.id
    response: dict[str, Any] = {"name": message.tool_name,
                                "response": {"error": value} if message.is_error else {"output": value}}
    if images and multimodal:
        response["parts"] = [_inline(b) for b in images]
    if requires_tool_call_id(model.id):
        response["id"] = message.tool_call_id
    part = {"functionResponse": response}
    last = contents[-1] if contents else None
    if last and last["role"] == "user" and any("functionResponse" in p for p in last["parts"]):
        last["parts"].append(part)
    else:
        contents.append({"role": "user", "parts": [part]})
    if images and not multimodal:
        contents.append({"role": "user", "parts": [{"text": TOOL_IMAGE_TEXT}, *(_inline(b) for b in images)]})


def convert_contents(model: Model, context: Context, *, share: bool = False) -> list[dict[str, Any]]:
    """The ``contents`` of a request. With ``share`` the converted prefix of a history that grew since the
    last call is reused (``_PREFIXES``): the caller must not edit the items."""
    if share:
        key = (model.id, model.provider, model.api, tuple(model.input))
        shared, _count = _PREFIXES.convert(key, context.messages, {},
                                           lambda segment, id_map, out: _convert(segment, model, id_map, out))
        return shared
    contents: list[dict[str, Any]] = []
    _convert(context.messages, model, {}, contents)
    return contents


def _convert(segment: Sequence[Message], model: Model, id_map: dict[str, str], contents: list[dict[str, Any]]) -> None:
    for message in transform_messages(segment, model, None, id_map):
        if isinstance(message, ToolResultMessage):
            _function_response(message, model, contents)
        elif isinstance(message, AssistantMessage):
            parts = _model_parts(message, model)
            if parts:
                contents.append({"role": "model", "parts": parts})
        else:
            parts = _user_parts(message.content)
            if parts:
                contents.append({"role": "user", "parts": parts})


_PREFIXES: Prefixes[dict[str, str]] = Prefixes(cut_before_standalone_turn, dict)


def convert_tools(tools: list[ToolDefinition]) -> list[dict[str, Any]] | None:
    if not tools:
        return None
    return [{"functionDeclarations": [{"name": t.name, "description": t.description,
                                       "parametersJsonSchema": t.parameters} for t in tools]}]


def _level_family(model_id: str) -> str | None:
    lowered = model_id.lower()
    if re.search(r"gemini-3(?:\.\d+)?-pro", lowered):
        return "pro"
    if re.search(r"gemini-3(?:\.\d+)?-flash", lowered):
        return "flash"
    if "gemma-4" in lowered:
        return "gemma"
    return None


def thinking_config(model: Model, options: StreamOptions) -> dict[str, Any] | None:
    """Gemini 3 / Gemma 4 take a ``thinkingLevel``, others a ``thinkingBudget`` (docs/providers.md#thinking-levels)."""
    if not model.reasoning:
        return None
    level = clamp_thinking_level(model, options.reasoning or "off")
    if level in ("xhigh", "max"):
        level = "high"
    family = _level_family(model.id)
    if family is not None:
        if family == "pro":
            value = "LOW" if level in ("off", "minimal", "low") else "HIGH"
        elif family == "gemma":
            value = "MINIMAL" if level in ("off", "minimal", "low") else "HIGH"
        else:
            value = "MINIMAL" if level == "off" else level.upper()
        config: dict[str, Any] = {"thinkingLevel": value}
        if level != "off":
            config = {"includeThoughts": True, **config}
        return config
    if level == "off":
        return {"thinkingBudget": 0}
    custom = (options.thinking_budgets or {}).get(level)
    budget = custom if custom is not None else next(
        (values[("minimal", "low", "medium", "high").index(level)] for key, values in _BUDGETS if key in model.id), -1)
    return {"includeThoughts": True, "thinkingBudget": budget}


def build_body(model: Model, context: Context, options: StreamOptions) -> dict[str, Any]:
    # Shared history items unless something may edit the body in place (an on_payload hook).
    body: dict[str, Any] = {"contents": convert_contents(model, context, share=options.on_payload is None)}
    if context.system_prompt:
        body["systemInstruction"] = {"role": "user", "parts": [{"text": sanitize_surrogates(context.system_prompt)}]}
    tools = convert_tools(context.tools or [])
    if tools:
        body["tools"] = tools
        if isinstance(options.tool_choice, str):
            body["toolConfig"] = {"functionCallingConfig": {"mode": _TOOL_CHOICE.get(options.tool_choice, "AUTO")}}
    generation: dict[str, Any] = {}
    if options.temperature is not None:
        generation["temperature"] = options.temperature
    max_tokens = base_max_tokens(model, options.max_tokens)
    if max_tokens:
        generation["maxOutputTokens"] = max_tokens
    thinking = thinking_config(model, options)
    if thinking:
        generation["thinkingConfig"] = thinking
    if generation:
        body["generationConfig"] = generation
    return body
