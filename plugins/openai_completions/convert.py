"""Build the Chat Completions request body from a pi Context (docs/providers.md#request-bodies)."""

from __future__ import annotations

import functools
import hashlib
import json
import weakref
from collections.abc import Callable
from typing import Any

from pi_plugins._openai_common import cache_retention, long_cache_ok

from pi_core.llm.incremental import JsonTexts, SharedItems
from pi_core.llm.stream import sanitize_surrogates
from pi_core.llm.transform import tool_result_text, transform_messages
from pi_core.models.thinking import base_max_tokens, clamp_thinking_level
from pi_core.providers import StreamOptions
from pi_core.types import AssistantMessage, Context, ImageContent, Message, Model, TextContent

# isort: split
from pi_core.types import ThinkingContent, ToolCall, ToolDefinition, ToolResultMessage, UserMessage

BRIDGE_TEXT = "I have processed the tool results."
SEE_IMAGE_TEXT = "(see attached image)"
TOOL_IMAGES_TEXT = "Attached image(s) from tool result:"


_ARGUMENTS_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))

# Wire dicts of history messages, by message identity. The agent loop sends the whole history on every
# turn and its messages are never changed once appended (transform_messages returns new objects for
# anything it rewrites), so each message is converted once per compat setting instead of once per turn.
# Entries go away with their message (weakref callback). Only build_body's callers that do not mutate
# the body share these dicts: see build_body.
_Converted = dict[str, Any] | None
_MEMO: dict[int, tuple[weakref.ref[Any], tuple[Any, ...], _Converted]] = {}


def _memo_key(compat: dict[str, Any]) -> tuple[Any, ...]:
    return (compat["requiresAssistantAfterToolResult"], compat["requiresThinkingAsText"],
            compat["requiresReasoningContentOnAssistantMessages"], compat["requiresToolResultName"])


def _memoized(message: Message, key: tuple[Any, ...], convert: Callable[[], _Converted]) -> _Converted:
    ident = id(message)
    entry = _MEMO.get(ident)
    if entry is not None and entry[0]() is message and entry[1] == key:
        return entry[2]
    converted = convert()

    def forget(_ref: object) -> None:
        _MEMO.pop(ident, None)

    _MEMO[ident] = (weakref.ref(message, forget), key, converted)
    return converted


def _image_part(block: ImageContent) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": f"data:{block.mime_type};base64,{block.data}"}}


def _user(content: str | list[TextContent | ImageContent]) -> dict[str, Any] | None:
    if isinstance(content, str):
        return {"role": "user", "content": sanitize_surrogates(content)}
    parts = [{"type": "text", "text": sanitize_surrogates(b.text)} if isinstance(b, TextContent) else _image_part(b)
             for b in content]
    return {"role": "user", "content": parts} if parts else None


def _assistant(message: AssistantMessage, compat: dict[str, Any]) -> dict[str, Any] | None:
    out: dict[str, Any] = {"role": "assistant", "content": "" if compat["requiresAssistantAfterToolResult"] else None}
    texts = [b.text for b in message.content if isinstance(b, TextContent) and b.text.strip()]
    if texts:
        out["content"] = sanitize_surrogates("".join(texts))
    thinking = [b for b in message.content if isinstance(b, ThinkingContent) and b.thinking.strip()]
    if thinking:
        if compat["requiresThinkingAsText"]:
            joined = "\n\n".join(b.thinking for b in thinking)
            out["content"] = f"{joined}\n\n{out['content']}" if out["content"] else joined
        elif thinking[0].thinking_signature:
            out[thinking[0].thinking_signature] = "\n".join(b.thinking for b in thinking)
    if compat["requiresReasoningContentOnAssistantMessages"]:
        out.setdefault("reasoning_content", "\n".join(b.thinking for b in thinking))
    calls = [b for b in message.content if isinstance(b, ToolCall)]
    if calls:
        out["tool_calls"] = [{"id": c.id, "type": "function",
                              "function": {"name": c.name, "arguments": _ARGUMENTS_JSON.encode(c.arguments)}}
                             for c in calls]
        details = [_json_or_none(c.thought_signature) for c in calls if c.thought_signature]
        if any(details):
            out["reasoning_details"] = [d for d in details if d]
    if not out["content"] and not calls:
        return None
    return out


def _json_or_none(text: str | None) -> Any:
    try:
        return json.loads(text or "")
    except ValueError:
        return None


def _tool_result(message: ToolResultMessage, compat: dict[str, Any]) -> dict[str, Any]:
    text = tool_result_text(message.content, SEE_IMAGE_TEXT)  # its images follow in a user message
    out: dict[str, Any] = {"role": "tool", "content": sanitize_surrogates(text or SEE_IMAGE_TEXT),
                           "tool_call_id": message.tool_call_id}
    if compat["requiresToolResultName"] and message.tool_name:
        out["name"] = message.tool_name
    return out


def mistral_id_normalizer() -> Any:
    """Mistral accepts only 9 alphanumeric characters: keep an id that already is one, else hash it.

    Stable within one request; a collision retries with ``{id}:{n}``."""
    given: dict[str, str] = {}
    used: set[str] = set()

    def normalize(call_id: str, model: Model, source: AssistantMessage) -> str:
        if call_id in given:
            return given[call_id]
        plain = "".join(ch for ch in call_id if ch.isascii() and ch.isalnum())
        candidate, attempt = (plain if len(plain) == 9 else None), 0
        while candidate is None or candidate in used:
            seed = call_id if attempt == 0 else f"{call_id}:{attempt}"
            digest = hashlib.sha256(seed.encode()).hexdigest()
            candidate, attempt = digest[:9], attempt + 1
        given[call_id] = candidate
        used.add(candidate)
        return candidate

    return normalize


def convert_messages(model: Model, context: Context, compat: dict[str, Any], *,
                     share: bool = False) -> list[dict[str, Any]]:
    """Chat Completions messages for ``context``. With ``share`` the dicts of history messages are
    reused across calls (see ``_MEMO``), and so is the converted prefix of a history that grew since
    the last call (see ``_PREFIXES``): the caller must not mutate them."""
    normalizer = mistral_id_normalizer() if compat.get("requiresMistralToolIds") else None
    key = _memo_key(compat) if share else None
    out: list[dict[str, Any]] = []
    if context.system_prompt:
        role = "developer" if model.reasoning and compat["supportsDeveloperRole"] else "system"
        out.append({"role": role, "content": sanitize_surrogates(context.system_prompt)})
    messages = context.messages
    if key is None or normalizer is not None:  # a Mistral id normaliser's state spans the whole request
        _convert_segment(model, messages, compat, key, normalizer, out, _SegmentState())
        return out
    prefix_key = (model.id, model.provider, model.api, "image" in model.input, key,
                  tuple(out[0].items()) if out else None)
    state, start, texts = _SegmentState(), 0, JsonTexts()
    cached = _PREFIXES.get(prefix_key)
    # List equality checks identity first (then content: an equal message converts the same), in C.
    if cached is not None and cached.messages == messages[:cached.cut]:
        out, start, state, texts = list(cached.out), cached.cut, cached.state.copy(), cached.texts
    # The next call may start where the last user or (sent) assistant message starts: nothing carries
    # over such a cut but renamed tool-call ids and the previous role, which the state keeps. A failed
    # assistant reply is left out of the request, so tool results around it group as one: no cut there.
    cut = next((i for i in range(len(messages) - 1, start - 1, -1) if _clean_cut(messages[i])), start)
    _convert_segment(model, messages[start:cut], compat, key, None, out, state)
    _PREFIXES.pop(prefix_key, None)
    _PREFIXES[prefix_key] = _Prefix(list(messages[:cut]), cut, list(out), state.copy(), texts)
    while len(_PREFIXES) > _MAX_PREFIXES:
        del _PREFIXES[next(iter(_PREFIXES))]
    shared = len(out)
    _convert_segment(model, messages[cut:], compat, key, None, out, state)
    return SharedItems(out, 0, shared, texts)


def _clean_cut(message: Message) -> bool:
    return isinstance(message, UserMessage) or (isinstance(message, AssistantMessage)
                                                and message.stop_reason not in ("error", "aborted"))


class _SegmentState:
    """What one history segment hands the next: renamed tool-call ids and the last role sent."""

    __slots__ = ("id_map", "last_role")

    def __init__(self, id_map: dict[str, str] | None = None, last_role: str | None = None) -> None:
        self.id_map = id_map if id_map is not None else {}
        self.last_role = last_role

    def copy(self) -> _SegmentState:
        return _SegmentState(dict(self.id_map), self.last_role)


class _Prefix:
    __slots__ = ("cut", "messages", "out", "state", "texts")

    def __init__(self, messages: list[Message], cut: int, out: list[dict[str, Any]], state: _SegmentState,
                 texts: JsonTexts) -> None:
        self.messages, self.cut, self.out, self.state, self.texts = messages, cut, out, state, texts


# The converted history of the last few conversations (model, compat, system prompt): on the next turn
# only what was appended since is converted, so a turn costs the same at message 10 and message 1,000.
_PREFIXES: dict[tuple[Any, ...], _Prefix] = {}
_MAX_PREFIXES = 8


def _convert_segment(model: Model, segment: list[Message], compat: dict[str, Any], key: tuple[Any, ...] | None,
                     normalizer: Any, out: list[dict[str, Any]], state: _SegmentState) -> None:
    messages: list[Message] = transform_messages(segment, model, normalizer, state.id_map)
    last_role = state.last_role
    i = 0
    while i < len(messages):
        message = messages[i]
        if isinstance(message, ToolResultMessage):
            images: list[dict[str, Any]] = []
            while i < len(messages) and isinstance(messages[i], ToolResultMessage):
                result = messages[i]
                assert isinstance(result, ToolResultMessage)
                if key is None:
                    out.append(_tool_result(result, compat))
                else:
                    converted_result = _memoized(result, key, functools.partial(_tool_result, result, compat))
                    assert converted_result is not None
                    out.append(converted_result)
                if "image" in model.input:
                    images += [_image_part(b) for b in result.content if isinstance(b, ImageContent)]
                i += 1
            if images:
                if compat["requiresAssistantAfterToolResult"]:
                    out.append({"role": "assistant", "content": BRIDGE_TEXT})
                out.append({"role": "user", "content": [{"type": "text", "text": TOOL_IMAGES_TEXT}, *images]})
                last_role = "user"
            else:
                last_role = "toolResult"
            continue
        if message.role == "user":
            if compat["requiresAssistantAfterToolResult"] and last_role == "toolResult":
                out.append({"role": "assistant", "content": BRIDGE_TEXT})
            content = message.content
            converted = _user(content) if key is None else _memoized(message, key, functools.partial(_user, content))
        else:
            assert isinstance(message, AssistantMessage)
            assistant = message
            converted = (_assistant(assistant, compat) if key is None
                         else _memoized(assistant, key, functools.partial(_assistant, assistant, compat)))
        if converted is not None:
            out.append(converted)
        last_role = message.role
        i += 1
    state.last_role = last_role


def convert_tools(tools: list[ToolDefinition], compat: dict[str, Any]) -> list[dict[str, Any]]:
    converted = []
    for tool in tools:
        function: dict[str, Any] = {"name": tool.name, "description": tool.description, "parameters": tool.parameters}
        if compat["supportsStrictMode"] is not False:
            function["strict"] = False
        converted.append({"type": "function", "function": function})
    return converted


def _has_tool_history(messages: list[Message]) -> bool:
    return any(isinstance(m, ToolResultMessage) or (isinstance(m, AssistantMessage) and m.tool_calls())
               for m in messages)


def _add_anthropic_cache_markers(body: dict[str, Any], ttl: bool) -> None:
    """OpenRouter ``anthropic/*``: cache breakpoints on the system prompt, last tool and last text."""
    marker: dict[str, Any] = {"type": "ephemeral", **({"ttl": "1h"} if ttl else {})}
    messages = body["messages"]
    for message in messages:
        if message["role"] in ("system", "developer") and isinstance(message["content"], str):
            message["content"] = [{"type": "text", "text": message["content"], "cache_control": marker}]
            break
    if body.get("tools"):
        body["tools"][-1]["cache_control"] = marker
    for message in reversed(messages):
        if message["role"] not in ("user", "assistant"):
            continue
        content = message["content"]
        if isinstance(content, str) and content:
            message["content"] = [{"type": "text", "text": content, "cache_control": marker}]
            return
        if isinstance(content, list):
            for part in reversed(content):
                if part.get("type") == "text":
                    part["cache_control"] = marker
                    return


def _thinking_fields(model: Model, options: StreamOptions, compat: dict[str, Any]) -> dict[str, Any]:
    if not model.reasoning:
        return {}
    level = clamp_thinking_level(model, options.reasoning or "off")
    level_map = model.thinking_level_map or {}
    effort = level_map.get(level, level) if level != "off" else None
    on = level != "off"
    fmt = compat["thinkingFormat"]
    if fmt in ("zai", "qwen"):
        return {"enable_thinking": on}
    if fmt == "mistral":
        return {"prompt_mode": "reasoning"} if on else {}
    if fmt == "qwen-chat-template":
        return {"chat_template_kwargs": {"enable_thinking": on, "preserve_thinking": True}}
    if fmt == "deepseek":
        fields: dict[str, Any] = {"thinking": {"type": "enabled" if on else "disabled"}}
        if on and effort:
            fields["reasoning_effort"] = effort
        return fields
    if fmt == "openrouter":
        if on:
            return {"reasoning": {"effort": effort}} if effort else {}
        off = level_map.get("off", "none")
        return {"reasoning": {"effort": off}} if off is not None else {}
    if not compat["supportsReasoningEffort"]:
        return {}
    if on:
        return {"reasoning_effort": effort} if effort else {}
    off_value = level_map.get("off")
    return {"reasoning_effort": off_value} if isinstance(off_value, str) else {}


def build_body(model: Model, context: Context, options: StreamOptions, compat: dict[str, Any]) -> dict[str, Any]:
    # History dicts are shared across turns unless something may edit the body in place: an on_payload
    # hook, or the Anthropic-style cache markers below.
    share = options.on_payload is None and compat["cacheControlFormat"] != "anthropic"
    body: dict[str, Any] = {"model": model.id, "messages": convert_messages(model, context, compat, share=share),
                            "stream": True}
    if compat["supportsUsageInStreaming"] is not False:
        body["stream_options"] = {"include_usage": True}
    if compat["supportsStore"]:
        body["store"] = False
    max_tokens = base_max_tokens(model, options.max_tokens)
    if max_tokens:
        body[compat["maxTokensField"]] = max_tokens
    if options.temperature is not None:
        body["temperature"] = options.temperature
    if context.tools:
        body["tools"] = convert_tools(context.tools, compat)
    elif _has_tool_history(context.messages):
        body["tools"] = []  # proxies in front of Anthropic reject tool traffic without a tools list
    if options.tool_choice is not None:
        body["tool_choice"] = options.tool_choice
    body.update(_thinking_fields(model, options, compat))

    retention = cache_retention(options)
    long_ok = long_cache_ok(model, options) and compat["supportsLongCacheRetention"] is not False
    if options.session_id and retention != "none" and ("api.openai.com" in model.base_url or long_ok):
        body["prompt_cache_key"] = options.session_id
        if long_ok:
            body["prompt_cache_retention"] = "24h"
    if compat["cacheControlFormat"] == "anthropic" and retention != "none":
        _add_anthropic_cache_markers(body, long_ok)

    if "openrouter.ai" in model.base_url and compat.get("openRouterRouting"):
        body["provider"] = compat["openRouterRouting"]
    routing = compat.get("vercelGatewayRouting") or {}
    if "ai-gateway.vercel.sh" in model.base_url and (routing.get("only") or routing.get("order")):
        body["providerOptions"] = {"gateway": {k: routing[k] for k in ("only", "order") if routing.get(k)}}
    return body
