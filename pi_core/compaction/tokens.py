"""Token accounting for compaction: reported usage and the chars/4 estimate (docs/sessions.md#token-accounting)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pi_core.sessions.format import MessageLike, message_to_dict
from pi_core.sessions.jsonfmt import js_dumps

IMAGE_CHARS = 4800  # an image counts as 4800 characters (1200 tokens)


def calculate_context_tokens(usage: dict[str, Any]) -> int:  # open: session entries and usage, Pi's JSON
    """``totalTokens``, or input+output+cacheRead+cacheWrite when that is 0 or missing."""
    total = usage.get("totalTokens") or 0
    if total:
        return int(total)
    return int(
        (usage.get("input") or 0) + (usage.get("output") or 0) + (usage.get("cacheRead") or 0)
        + (usage.get("cacheWrite") or 0)
    )


def assistant_usage(message: MessageLike) -> dict[str, Any] | None:  # open: the reply's usage, Pi's JSON
    """Usage of an assistant message, None for other roles and for aborted/error replies."""
    data = message_to_dict(message)
    if data.get("role") != "assistant" or data.get("stopReason") in ("aborted", "error"):
        return None
    usage = data.get("usage")
    return usage if isinstance(usage, dict) else None


def last_assistant_usage(entries: list[dict[str, Any]]) -> dict[str, Any] | None:  # open: session entries and usage, Pi's JSON
    """Usage of the newest valid assistant message among session entries."""
    for entry in reversed(entries):
        if entry.get("type") == "message":
            usage = assistant_usage(entry.get("message") or {})
            if usage is not None:
                return usage
    return None


def _content_chars(content: Any, count_images: bool) -> int:
    if isinstance(content, str):
        return _js_len(content)
    chars = 0
    for block in content or []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            chars += _js_len(block.get("text") or "")
        elif count_images and block.get("type") == "image":
            chars += IMAGE_CHARS
    return chars


def _js_len(text: str) -> int:
    """String length in UTF-16 code units, as JS counts it."""
    return len(text.encode("utf-16-le")) // 2 if not text.isascii() else len(text)


def estimate_tokens(message: MessageLike) -> int:
    """chars/4, rounded up, of what the message puts in the context."""
    data = message_to_dict(message)
    role = data.get("role")
    chars = 0
    if role == "user":
        chars = _content_chars(data.get("content"), count_images=False)
    elif role == "assistant":
        for block in data.get("content") or []:
            kind = block.get("type") if isinstance(block, dict) else None
            if kind == "text":
                chars += _js_len(block.get("text") or "")
            elif kind == "thinking":
                chars += _js_len(block.get("thinking") or "")
            elif kind == "toolCall":
                arguments = block.get("arguments")
                chars += _js_len(block.get("name") or "") + _js_len(js_dumps(arguments if arguments is not None else {}))
    elif role in ("custom", "toolResult"):
        chars = _content_chars(data.get("content"), count_images=True)
    elif role == "bashExecution":
        chars = _js_len(data.get("command") or "") + _js_len(data.get("output") or "")
    elif role in ("branchSummary", "compactionSummary"):
        chars = _js_len(data.get("summary") or "")
    else:
        return 0
    return math.ceil(chars / 4)


@dataclass(eq=False, repr=False)
class ContextUsageEstimate:
    """The context tokens: the last reported usage plus an estimate of what came after it."""

    tokens: int
    usage_tokens: int
    trailing_tokens: int
    last_usage_index: int | None


def estimate_context_tokens(messages: Sequence[MessageLike]) -> ContextUsageEstimate:
    """Last valid assistant usage plus estimates of the messages after it; else the sum of estimates."""
    for index in range(len(messages) - 1, -1, -1):
        usage = assistant_usage(messages[index])
        if usage is not None:
            usage_tokens = calculate_context_tokens(usage)
            trailing = sum(estimate_tokens(m) for m in messages[index + 1 :])
            return ContextUsageEstimate(usage_tokens + trailing, usage_tokens, trailing, index)
    estimated = sum(estimate_tokens(m) for m in messages)
    return ContextUsageEstimate(estimated, 0, estimated, None)


def should_compact(context_tokens: int, context_window: int, enabled: bool, reserve_tokens: int) -> bool:
    """True when automatic compaction is on and the context leaves less than ``reserve_tokens``."""
    return enabled and context_tokens > context_window - reserve_tokens
