"""Build the Anthropic Messages request body and headers from a pi Context (docs/providers.md#request-bodies)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from pi_plugins._copilot import COPILOT, copilot_headers

from pi_core.llm.environ import getenv
from pi_core.llm.incremental import Prefixes, cut_before_standalone_turn
from pi_core.llm.stream import sanitize_surrogates
from pi_core.llm.transform import transform_messages
from pi_core.models.thinking import (
    adjust_max_tokens_for_thinking,
    base_max_tokens,
    mapped_level,
)
from pi_core.providers import StreamOptions
from pi_core.types import AssistantMessage, Context, ImageContent, Message, Model, TextContent

# isort: split
from pi_core.types import ThinkingContent, ToolCall, ToolDefinition, ToolResultMessage, UserMessage

ADAPTIVE_MARKERS = ("opus-4-6", "opus-4.6", "opus-4-7", "opus-4.7", "sonnet-4-6", "sonnet-4.6")
INTERLEAVED_BETA = "interleaved-thinking-2025-05-14"
FINE_GRAINED_BETA = "fine-grained-tool-streaming-2025-05-14"
OAUTH_BETAS = ("claude-code-20250219", "oauth-2025-04-20")
CLAUDE_CODE_IDENTITY = "You are Claude Code, Anthropic's official CLI for Claude."
CLAUDE_CODE_VERSION = "2.1.75"
# What Pi sends; gateways that speak the Messages API check it. A provider's ``compat.anthropicVersion``
# (or an ``anthropic-version`` entry in its ``headers``) picks another.
DEFAULT_ANTHROPIC_VERSION = "2023-06-01"
SEE_IMAGE_TEXT = "(see attached image)"
# With an OAuth (subscription) token the API only accepts Claude Code's own spelling of these tools.
CLAUDE_CODE_TOOLS = ("Read", "Write", "Edit", "Bash", "Grep", "Glob", "AskUserQuestion", "EnterPlanMode",
                     "ExitPlanMode", "KillShell", "NotebookEdit", "Skill", "Task", "TaskOutput", "TodoWrite",
                     "WebFetch", "WebSearch")
_CLAUDE_CODE_BY_LOWER = {name.lower(): name for name in CLAUDE_CODE_TOOLS}


def is_oauth_token(api_key: str | None) -> bool:
    return bool(api_key) and "sk-ant-oat" in api_key  # type: ignore[operator]


def is_adaptive(model: Model) -> bool:
    return any(marker in model.id for marker in ADAPTIVE_MARKERS)


def to_wire_tool_name(name: str, oauth: bool) -> str:
    return _CLAUDE_CODE_BY_LOWER.get(name.lower(), name) if oauth else name


def from_wire_tool_name(name: str, tools: list[ToolDefinition] | None, oauth: bool) -> str:
    if not oauth:
        return name
    for tool in tools or []:
        if tool.name.lower() == name.lower():
            return tool.name
    return name


def _compat(model: Model, key: str) -> Any:
    return (model.compat or {}).get(key)


def cache_control(model: Model, options: StreamOptions) -> dict[str, str] | None:
    retention = options.cache_retention or ("long" if getenv("PI_CACHE_RETENTION") == "long" else "short")
    if retention == "none":
        return None
    control = {"type": "ephemeral"}
    if retention == "long" and _compat(model, "supportsLongCacheRetention") is not False:
        control["ttl"] = "1h"
    return control


# --- messages -------------------------------------------------------------------------------------


def _image(block: ImageContent) -> dict[str, Any]:
    return {"type": "image", "source": {"type": "base64", "media_type": block.mime_type, "data": block.data}}


def _user_blocks(content: list[TextContent | ImageContent]) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for block in content:
        if isinstance(block, TextContent):
            if block.text.strip():
                blocks.append({"type": "text", "text": sanitize_surrogates(block.text)})
        else:
            blocks.append(_image(block))
    return blocks


def _tool_result_content(message: ToolResultMessage) -> str | list[dict[str, Any]]:
    if not any(isinstance(b, ImageContent) for b in message.content):
        return "\n".join(sanitize_surrogates(b.text) for b in message.content if isinstance(b, TextContent))
    # in the tool's order: "text, image, text" stays so ("the image above …")
    blocks = [_image(b) if isinstance(b, ImageContent) else {"type": "text", "text": sanitize_surrogates(b.text)}
              for b in message.content if isinstance(b, ImageContent) or b.text]
    if not any(b["type"] == "text" for b in blocks):
        blocks.insert(0, {"type": "text", "text": SEE_IMAGE_TEXT})
    return blocks


def _assistant_blocks(message: AssistantMessage, oauth: bool) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, TextContent):
            if block.text.strip():
                blocks.append({"type": "text", "text": sanitize_surrogates(block.text)})
        elif isinstance(block, ThinkingContent):
            if block.redacted:
                blocks.append({"type": "redacted_thinking", "data": block.thinking_signature or ""})
            elif not block.thinking.strip():
                continue
            elif not block.thinking_signature:
                blocks.append({"type": "text", "text": sanitize_surrogates(block.thinking)})
            else:
                blocks.append({"type": "thinking", "thinking": sanitize_surrogates(block.thinking),
                               "signature": block.thinking_signature})
        elif isinstance(block, ToolCall):
            blocks.append({"type": "tool_use", "id": block.id, "name": to_wire_tool_name(block.name, oauth),
                           "input": block.arguments})
    return blocks


def convert_messages(context: Context, model: Model, oauth: bool,
                     control: dict[str, str] | None, *, share: bool = False) -> list[dict[str, Any]]:
    """The Messages API ``messages``. With ``share`` the converted prefix of a history that grew since the
    last call is reused (``_PREFIXES``): the caller must not edit the items (the cache marker below edits
    only the last one, which is never shared)."""
    out: list[dict[str, Any]]
    if share:
        items, _shared = _PREFIXES.convert((model.id, model.provider, model.api, tuple(model.input), oauth),
                                           context.messages, {},
                                           lambda segment, id_map, items: _convert(segment, model, oauth, id_map, items))
        if control and items and items[-1]["role"] == "user":
            items.own_last()  # shared only when the history is exactly the kept prefix: a copy gets the marker
        out = items
    else:
        out = []
        _convert(context.messages, model, oauth, {}, out)
    if control and out and out[-1]["role"] == "user":
        last = out[-1]
        if isinstance(last["content"], str):
            last["content"] = [{"type": "text", "text": last["content"], "cache_control": dict(control)}]
        else:
            last["content"][-1]["cache_control"] = dict(control)
    return out


def _convert(segment: Sequence[Message], model: Model, oauth: bool, id_map: dict[str, str],
             out: list[dict[str, Any]]) -> None:
    for message in transform_messages(segment, model, None, id_map):
        if isinstance(message, UserMessage):
            if isinstance(message.content, str):
                if message.content.strip():
                    out.append({"role": "user", "content": sanitize_surrogates(message.content)})
            else:
                blocks = _user_blocks(message.content)
                if blocks:
                    out.append({"role": "user", "content": blocks})
        elif isinstance(message, AssistantMessage):
            blocks = _assistant_blocks(message, oauth)
            if blocks:
                out.append({"role": "assistant", "content": blocks})
        elif isinstance(message, ToolResultMessage):
            result = {"type": "tool_result", "tool_use_id": message.tool_call_id,
                      "content": _tool_result_content(message), "is_error": message.is_error}
            previous = out[-1] if out else None
            # Consecutive results share one user turn, as the API expects.
            if previous and previous["role"] == "user" and isinstance(previous["content"], list) and \
                    previous["content"] and previous["content"][-1].get("type") == "tool_result":
                previous["content"].append(result)
            else:
                out.append({"role": "user", "content": [result]})


_PREFIXES: Prefixes[dict[str, str]] = Prefixes(cut_before_standalone_turn, dict)


# --- tools and the request ------------------------------------------------------------------------


def convert_tools(tools: list[ToolDefinition], model: Model, oauth: bool,
                  control: dict[str, str] | None) -> list[dict[str, Any]]:
    eager = _compat(model, "supportsEagerToolInputStreaming") is not False
    out: list[dict[str, Any]] = []
    for tool in tools:
        schema = tool.parameters or {}
        entry: dict[str, Any] = {"name": to_wire_tool_name(tool.name, oauth), "description": tool.description}
        if eager:
            entry["eager_input_streaming"] = True
        # Only properties and required survive at the top level; nested schemas go as they are.
        entry["input_schema"] = {"type": "object", "properties": schema.get("properties") or {},
                                 "required": schema.get("required") or []}
        out.append(entry)
    if control and out:
        out[-1]["cache_control"] = dict(control)
    return out


def build_params(model: Model, context: Context, options: StreamOptions, oauth: bool) -> dict[str, Any]:
    control = cache_control(model, options)
    max_tokens = base_max_tokens(model, options.max_tokens) or model.max_tokens // 3
    # Shared history items unless something may edit the body in place (an on_payload hook).
    messages = convert_messages(context, model, oauth, control, share=options.on_payload is None)
    params: dict[str, Any] = {"model": model.id, "messages": messages,
                              "max_tokens": max_tokens, "stream": True}
    system: list[dict[str, Any]] = []
    if oauth:
        system.append({"type": "text", "text": CLAUDE_CODE_IDENTITY})
    if context.system_prompt:
        system.append({"type": "text", "text": sanitize_surrogates(context.system_prompt)})
    if system:
        if control:
            for block in system:
                block["cache_control"] = dict(control)
        params["system"] = system
    thinking_on = bool(options.reasoning) and model.reasoning
    if options.temperature is not None and not thinking_on:
        params["temperature"] = options.temperature
    if context.tools:
        params["tools"] = convert_tools(context.tools, model, oauth, control)
    if thinking_on:
        level = options.reasoning or "medium"
        if is_adaptive(model):
            params["thinking"] = {"type": "adaptive", "display": "summarized"}
            effort = mapped_level(model, level) or {"minimal": "low", "low": "low", "medium": "medium"}.get(level, "high")
            params["output_config"] = {"effort": effort}
        else:
            max_tokens, budget = adjust_max_tokens_for_thinking(params["max_tokens"], model.max_tokens, level,
                                                                 options.thinking_budgets)
            params["max_tokens"] = max_tokens
            params["thinking"] = {"type": "enabled", "budget_tokens": budget, "display": "summarized"}
    elif model.reasoning:
        params["thinking"] = {"type": "disabled"}
    user_id = (options.metadata or {}).get("user_id")
    if isinstance(user_id, str):
        params["metadata"] = {"user_id": user_id}
    if options.tool_choice is not None:
        choice = options.tool_choice
        params["tool_choice"] = {"type": choice} if isinstance(choice, str) else choice
    return params


def status_text(status: int, body: str) -> str:
    """The SDK's wording of an HTTP error: ``{status} {body as JSON}``, else the raw text, else no body."""
    try:
        parsed: Any = json.loads(body) if body else None
    except ValueError:
        parsed = body
    if isinstance(parsed, (dict, list)):
        return f"{status} {json.dumps(parsed)}"
    if parsed:
        return f"{status} {parsed}"
    return f"{status} status code (no body)"


def has_header(name: str, *sources: dict[str, str] | None) -> bool:
    lower = name.lower()
    return any(key.lower() == lower for source in sources for key in (source or {}))


def header_auth(model: Model, options: StreamOptions) -> bool:
    """True when the request's credential is an ``Authorization`` header of its own (``ANTHROPIC_AUTH_TOKEN``,
    models.json ``authHeader``/headers) or a Bearer token by provider (GitHub Copilot): no ``x-api-key``."""
    return model.provider == COPILOT or has_header("authorization", model.headers, options.headers)


def build_headers(model: Model, context: Context, options: StreamOptions, oauth: bool,
                  api_key: str) -> dict[str, str]:
    """Credentials (``x-api-key``; ``Authorization: Bearer`` for an OAuth token and for GitHub Copilot;
    nothing when the headers bring an ``Authorization`` of their own), version, betas; then Copilot's
    per-request headers, the model's and the request's own headers, which win."""
    from pi_core import __version__

    betas: list[str] = list(OAUTH_BETAS) if oauth else []
    if not is_adaptive(model):
        betas.append(INTERLEAVED_BETA)
    if context.tools and _compat(model, "supportsEagerToolInputStreaming") is False:
        betas.append(FINE_GRAINED_BETA)
    version = _compat(model, "anthropicVersion")
    headers = {"accept": "application/json", "anthropic-dangerous-direct-browser-access": "true",
               "anthropic-version": version if isinstance(version, str) and version else DEFAULT_ANTHROPIC_VERSION,
               "user-agent": f"pi/{__version__}"}
    if oauth or model.provider == COPILOT:
        headers["authorization"] = f"Bearer {api_key}"
    elif not header_auth(model, options):
        headers["x-api-key"] = api_key
    if betas:
        headers["anthropic-beta"] = ",".join(betas)
    if oauth:
        headers["user-agent"] = f"claude-cli/{CLAUDE_CODE_VERSION}"
        headers["x-app"] = "cli"
    headers.update(model.headers or {})
    headers.update(copilot_headers(model, context))
    headers.update(options.headers or {})
    return headers
