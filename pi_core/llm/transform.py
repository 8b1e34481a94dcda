"""Prepare a conversation for a (possibly different) target model before wire conversion,
docs/providers.md#cross-model-history.

``transform_messages(messages, model, normalize_tool_call_id=None) -> list[Message]`` (input not mutated):

1. Images become placeholder text when the model is text-only (a run of images gives one placeholder).
2. Assistant turns from a *different* model (provider, api or model id differ): redacted thinking is
   dropped, thinking with text becomes plain text, text loses its signature, tool calls lose their
   ``thought_signature`` and get their id normalised for the target API (results follow the new id).
   Same-model turns are kept as they are (empty unsigned thinking is dropped either way).
3. Assistant turns that ended in ``error`` or ``aborted`` are dropped.
4. A tool call left without a result gets a synthetic error result (``No result provided``) before the
   next user or assistant message, or at the end of the list.

``normalize_tool_call_id(id, model, source_message) -> str`` defaults to ``tool_call_id_normalizer(model)``,
which knows the rule of each built-in API (Anthropic's ``[A-Za-z0-9_-]{1,64}``, Chat Completions' 40
chars, Responses' ``call|fc_item``). Other plugins may pass their own.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from pi_core.types import AssistantMessage, ImageContent, Message, Model, TextContent

# isort: split
from pi_core.types import ThinkingContent, ToolCall, ToolResultMessage, UserMessage

IdNormalizer = Callable[[str, Model, AssistantMessage], str]

USER_IMAGE_PLACEHOLDER = "(image omitted: model does not support images)"
TOOL_IMAGE_PLACEHOLDER = "(tool image omitted: model does not support images)"
NO_RESULT_TEXT = "No result provided"

_UNSAFE = re.compile(r"[^a-zA-Z0-9_-]")


def sanitize_id(value: str, limit: int) -> str:
    return _UNSAFE.sub("_", value)[:limit]


def _anthropic_id(call_id: str, model: Model, source: AssistantMessage) -> str:
    return sanitize_id(call_id, 64)


def _completions_id(call_id: str, model: Model, source: AssistantMessage) -> str:
    if "|" in call_id:
        return sanitize_id(call_id.split("|", 1)[0], 40)
    return call_id[:40] if model.provider == "openai" else call_id


def _responses_id(call_id: str, model: Model, source: AssistantMessage) -> str:
    if model.provider not in ("openai", "openai-codex", "opencode") or "|" not in call_id:
        return call_id
    call, item = call_id.split("|", 1)
    call = _UNSAFE.sub("_", call)
    item = _UNSAFE.sub("_", item)
    if not item.startswith("fc"):
        item = "fc_" + item
    return f"{call[:64].rstrip('_')}|{item[:64].rstrip('_')}"


def _google_id(call_id: str, model: Model, source: AssistantMessage) -> str:
    # Only Claude and gpt-oss models behind the Gemini/Vertex APIs require (and check) tool ids.
    if model.id.startswith(("claude-", "gpt-oss-")):
        return sanitize_id(call_id, 64)
    return call_id


_NORMALIZERS: dict[str, IdNormalizer] = {
    "anthropic-messages": _anthropic_id,
    "bedrock-converse-stream": _anthropic_id,
    "openai-completions": _completions_id,
    "openai-responses": _responses_id,
    "azure-openai-responses": _responses_id,
    "openai-codex-responses": _responses_id,
    "google-generative-ai": _google_id,
    "google-vertex": _google_id,
}


def tool_call_id_normalizer(model: Model) -> IdNormalizer | None:
    """The id rule of the model's API, or None (ids pass unchanged) for an API without one."""
    return _NORMALIZERS.get(model.api)


def is_same_model(message: AssistantMessage, model: Model) -> bool:
    return message.provider == model.provider and message.api == model.api and message.model == model.id


def _without_images(message: Message, model: Model) -> Message:
    if "image" in model.input:
        return message
    if isinstance(message, UserMessage) and not isinstance(message.content, str) \
            and any(isinstance(b, ImageContent) for b in message.content):
        return message.model_copy(update={"content": _collapse(message.content, USER_IMAGE_PLACEHOLDER)})
    if isinstance(message, ToolResultMessage) and any(isinstance(b, ImageContent) for b in message.content):
        return message.model_copy(update={"content": _collapse(message.content, TOOL_IMAGE_PLACEHOLDER)})
    return message


def _collapse(content: Sequence[TextContent | ImageContent], placeholder: str) -> list[TextContent | ImageContent]:
    out: list[TextContent | ImageContent] = []
    previous_was_image = False
    for block in content:
        if isinstance(block, ImageContent):
            if not previous_was_image:
                out.append(TextContent(text=placeholder))
            previous_was_image = True
        else:
            out.append(block)
            previous_was_image = False
    return out


def tool_result_text(content: Sequence[TextContent | ImageContent], image_marker: str) -> str:
    """A tool result's text for a wire whose tool results hold text only (the images follow in a message of
    their own): the texts joined by newlines, with ``image_marker`` where an image stood before more text, so
    the model still reads them in the tool's order ("the image above …"). Empty when there is no text."""
    parts: list[str] = []
    pending_image = False
    for block in content:
        if isinstance(block, ImageContent):
            pending_image = True
            continue
        if pending_image:
            parts.append(image_marker)
        pending_image = False
        parts.append(block.text)
    return "\n".join(parts)


def _convert_assistant(message: AssistantMessage, model: Model, normalize: IdNormalizer | None,
                       id_map: dict[str, str]) -> AssistantMessage:
    same = is_same_model(message, model)
    blocks: list[TextContent | ThinkingContent | ToolCall] = []
    changed = False
    for block in message.content:
        if isinstance(block, ThinkingContent):
            if block.redacted:
                keep = same
            elif same and block.thinking_signature:
                keep = True
            elif not block.thinking.strip():
                keep = False
            elif same:
                keep = True
            else:
                blocks.append(TextContent(text=block.thinking))
                changed = True
                continue
            if keep:
                blocks.append(block)
            else:
                changed = True
        elif isinstance(block, TextContent):
            if same or block.text_signature is None:
                blocks.append(block)
            else:
                blocks.append(TextContent(text=block.text))
                changed = True
        else:
            if same:
                blocks.append(block)
                continue
            new_id = normalize(block.id, model, message) if normalize else block.id
            if new_id != block.id:
                id_map[block.id] = new_id
            if new_id != block.id or block.thought_signature is not None:
                block = block.model_copy(update={"id": new_id, "thought_signature": None})
                changed = True
            blocks.append(block)
    return message.model_copy(update={"content": blocks}) if changed else message


def _synthetic_result(call: ToolCall) -> ToolResultMessage:
    return ToolResultMessage(tool_call_id=call.id, tool_name=call.name,
                             content=[TextContent(text=NO_RESULT_TEXT)], is_error=True)


def transform_messages(messages: Sequence[Message], model: Model,
                       normalize_tool_call_id: IdNormalizer | None = None,
                       id_map: dict[str, str] | None = None) -> list[Message]:
    """``id_map`` (tool-call ids renamed so far, updated in place) lets a caller transform a history in
    segments cut before a user or assistant message, with the same result as in one piece."""
    normalize = normalize_tool_call_id or tool_call_id_normalizer(model)
    id_map = {} if id_map is None else id_map
    first: list[Message] = []
    for message in messages:
        message = _without_images(message, model)
        if isinstance(message, AssistantMessage):
            message = _convert_assistant(message, model, normalize, id_map)
        elif isinstance(message, ToolResultMessage) and message.tool_call_id in id_map:
            message = message.model_copy(update={"tool_call_id": id_map[message.tool_call_id]})
        first.append(message)

    result: list[Message] = []
    pending: list[ToolCall] = []
    answered: set[str] = set()

    def flush() -> None:
        nonlocal pending, answered
        result.extend(_synthetic_result(call) for call in pending if call.id not in answered)
        pending, answered = [], set()

    for message in first:
        if isinstance(message, AssistantMessage):
            flush()
            if message.stop_reason in ("error", "aborted"):
                continue
            pending = message.tool_calls()
            result.append(message)
        elif isinstance(message, ToolResultMessage):
            answered.add(message.tool_call_id)
            result.append(message)
        elif isinstance(message, UserMessage):
            flush()
            result.append(message)
        else:
            result.append(message)
    flush()
    return result
