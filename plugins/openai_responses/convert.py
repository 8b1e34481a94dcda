"""Build the Responses request body from a pi Context (docs/providers.md#request-bodies)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from typing import Any

from pi_plugins._openai_common import cache_retention, long_cache_ok

from pi_core.llm.incremental import Prefixes
from pi_core.llm.stream import sanitize_surrogates
from pi_core.llm.transform import transform_messages
from pi_core.models.thinking import base_max_tokens, clamp_thinking_level
from pi_core.providers import StreamOptions
from pi_core.types import AssistantMessage, Context, ImageContent, Message, Model, TextContent

# isort: split
from pi_core.types import ThinkingContent, ToolCall, ToolDefinition, ToolResultMessage, UserMessage

SEE_IMAGE_TEXT = "(see attached image)"


def encode_text_signature(item_id: str, phase: str | None = None) -> str:
    payload: dict[str, Any] = {"v": 1, "id": item_id}
    if phase:
        payload["phase"] = phase
    return json.dumps(payload, separators=(",", ":"))


def parse_text_signature(signature: str | None) -> tuple[str, str | None] | None:
    """``(message item id, phase)`` from a v1 JSON signature, or a legacy plain-id signature."""
    if not signature:
        return None
    if signature.startswith("{"):
        try:
            data = json.loads(signature)
        except ValueError:
            data = None
        if isinstance(data, dict) and data.get("v") == 1 and isinstance(data.get("id"), str):
            phase = data.get("phase")
            return data["id"], phase if phase in ("commentary", "final_answer") else None
    return signature, None


def _short_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _image(block: ImageContent) -> dict[str, Any]:
    return {"type": "input_image", "detail": "auto", "image_url": f"data:{block.mime_type};base64,{block.data}"}


def _user(content: str | list[TextContent | ImageContent]) -> dict[str, Any] | None:
    if isinstance(content, str):
        return {"role": "user", "content": [{"type": "input_text", "text": sanitize_surrogates(content)}]}
    parts = [{"type": "input_text", "text": sanitize_surrogates(b.text)} if isinstance(b, TextContent) else _image(b)
             for b in content]
    return {"role": "user", "content": parts} if parts else None


def _assistant(message: AssistantMessage, model: Model, index: int) -> list[dict[str, Any]]:
    other_model_same_api = (message.model != model.id and message.provider == model.provider
                            and message.api == model.api)
    items: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, ThinkingContent):
            if block.thinking_signature:
                try:
                    items.append(json.loads(block.thinking_signature))
                except ValueError:
                    continue  # not a stored reasoning item (e.g. from another API): nothing to replay
        elif isinstance(block, TextContent):
            parsed = parse_text_signature(block.text_signature)
            msg_id = parsed[0] if parsed else f"msg_{index}"
            if len(msg_id) > 64:
                msg_id = f"msg_{_short_hash(msg_id)}"
            item: dict[str, Any] = {
                "type": "message", "role": "assistant",
                "content": [{"type": "output_text", "text": sanitize_surrogates(block.text), "annotations": []}],
                "status": "completed", "id": msg_id,
            }
            if parsed and parsed[1]:
                item["phase"] = parsed[1]
            items.append(item)
        elif isinstance(block, ToolCall):
            call_id, _, item_id = block.id.partition("|")
            call: dict[str, Any] = {"type": "function_call"}
            # An fc_ item id from another model would fail OpenAI's reasoning-pairing check: leave it out.
            if item_id and not (other_model_same_api and item_id.startswith("fc_")):
                call["id"] = item_id
            call.update(call_id=call_id, name=block.name, arguments=json.dumps(block.arguments, ensure_ascii=False, separators=(",", ":")))
            items.append(call)
    return items


def _in_order(content: list[TextContent | ImageContent]) -> list[dict[str, Any]]:
    """A tool result with images, in the tool's order; adjacent texts join into one part, as before images."""
    parts: list[dict[str, Any]] = []
    for block in content:
        if isinstance(block, ImageContent):
            parts.append(_image(block))
        elif block.text and parts and parts[-1]["type"] == "input_text":
            parts[-1]["text"] += "\n" + sanitize_surrogates(block.text)
        elif block.text:
            parts.append({"type": "input_text", "text": sanitize_surrogates(block.text)})
    return parts


def _tool_result(message: ToolResultMessage, model: Model) -> dict[str, Any]:
    text = "\n".join(b.text for b in message.content if isinstance(b, TextContent))
    output: str | list[dict[str, Any]]
    if any(isinstance(b, ImageContent) for b in message.content) and "image" in model.input:
        output = _in_order(message.content)
    else:
        output = sanitize_surrogates(text or SEE_IMAGE_TEXT)
    return {"type": "function_call_output", "call_id": message.tool_call_id.partition("|")[0], "output": output}


def convert_input(model: Model, context: Context,
                  before_assistant: Callable[[AssistantMessage], list[dict[str, Any]]] | None = None, *,
                  share: bool = False) -> list[dict[str, Any]]:
    """The Responses ``input`` items; ``before_assistant`` may put items ahead of a past answer's (Codex's
    ``configuration_update``). With ``share`` the converted prefix of a history that grew since the last
    call is reused (``_PREFIXES``): the caller must not edit the items."""
    items: list[dict[str, Any]] = []
    if context.system_prompt:
        items.append({"role": "developer" if model.reasoning else "system",
                      "content": sanitize_surrogates(context.system_prompt)})

    def convert(segment: Sequence[Message], state: _State, out: list[dict[str, Any]]) -> None:
        for message in transform_messages(segment, model, None, state.id_map):
            index, state.index = state.index, state.index + 1
            if isinstance(message, ToolResultMessage):
                out.append(_tool_result(message, model))
            elif isinstance(message, AssistantMessage):
                converted_items = _assistant(message, model, index)
                if converted_items and before_assistant is not None:
                    out.extend(before_assistant(message))
                out.extend(converted_items)
            else:
                converted = _user(message.content)
                if converted:
                    out.append(converted)

    if not share or before_assistant is not None:
        convert(context.messages, _State(), items)
        return items
    key = (model.id, model.provider, model.api, "image" in model.input)
    history, _shared = _PREFIXES.convert(key, context.messages, _State(), convert)
    return history.after(items) if items else history


class _State:
    """What one converted segment hands the next: renamed tool-call ids, and the position in the history
    after the transform (a text block without a stored id is named ``msg_{position}``)."""

    __slots__ = ("id_map", "index")

    def __init__(self, id_map: dict[str, str] | None = None, index: int = 0) -> None:
        self.id_map = id_map if id_map is not None else {}
        self.index = index

    def copy(self) -> _State:
        return _State(dict(self.id_map), self.index)


def _cut_before(message: Message) -> bool:
    # Nothing crosses a user or (sent) assistant message but renamed ids and the position; a failed reply
    # is left out by the transform, and orphaned tool calls get their results at the next such message.
    return isinstance(message, UserMessage) or (isinstance(message, AssistantMessage)
                                                and message.stop_reason not in ("error", "aborted"))


_PREFIXES: Prefixes[_State] = Prefixes(_cut_before, _State.copy)


def convert_tools(tools: list[ToolDefinition]) -> list[dict[str, Any]]:
    return [{"type": "function", "name": t.name, "description": t.description, "parameters": t.parameters,
             "strict": False} for t in tools]


def build_body(model: Model, context: Context, options: StreamOptions) -> dict[str, Any]:
    # Shared history items unless something may edit the body in place (an on_payload hook).
    body: dict[str, Any] = {"model": model.id, "input": convert_input(model, context, share=options.on_payload is None),
                            "stream": True}
    retention = cache_retention(options)
    if options.session_id and retention != "none":
        body["prompt_cache_key"] = options.session_id
    if long_cache_ok(model, options):
        body["prompt_cache_retention"] = "24h"
    body["store"] = False
    max_tokens = base_max_tokens(model, options.max_tokens)
    if max_tokens:
        body["max_output_tokens"] = max_tokens
    if options.temperature is not None:
        body["temperature"] = options.temperature
    if context.tools:
        body["tools"] = convert_tools(context.tools)
    if options.tool_choice is not None:
        body["tool_choice"] = options.tool_choice
    if model.reasoning:
        level = clamp_thinking_level(model, options.reasoning or "off")
        level_map = model.thinking_level_map or {}
        if level != "off":
            body["reasoning"] = {"effort": level_map.get(level) or level, "summary": "auto"}
            body["include"] = ["reasoning.encrypted_content"]
        elif model.provider != "github-copilot":
            off = level_map.get("off", "none")
            if off is not None:
                body["reasoning"] = {"effort": off}
    return body


def session_headers(model: Model, options: StreamOptions) -> dict[str, str]:
    if not options.session_id or cache_retention(options) == "none":
        return {}
    headers = {"x-client-request-id": options.session_id}
    if (model.compat or {}).get("sendSessionIdHeader") is not False:
        headers["session_id"] = options.session_id
    return headers
