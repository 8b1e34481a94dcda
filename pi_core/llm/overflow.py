"""Recognise context-window overflow in a failed (or silently truncated) reply: docs/providers.md#context-overflow.

``is_context_overflow(message, context_window=None)`` lets a caller compact the history and retry
instead of showing the error. Rate-limit texts are never an overflow.
"""

from __future__ import annotations

import re

from pi_core.types import AssistantMessage

_OVERFLOW_PATTERNS = [
    r"prompt is too long",
    r"request_too_large",
    r"input is too long for requested model",
    r"exceeds the context window",
    r"input token count.*exceeds the maximum",
    r"maximum prompt length is \d+",
    r"reduce the length of the messages",
    r"maximum context length is \d+ tokens",
    r"exceeds the limit of \d+",
    r"exceeds the available context size",
    r"greater than the context length",
    r"context window exceeds limit",
    r"exceeded model token limit",
    r"too large for model with \d+ maximum context length",
    r"model_context_window_exceeded",
    r"prompt too long; exceeded (?:max )?context length",
    r"context[_ ]length[_ ]exceeded",
    r"too many tokens",
    r"token limit exceeded",
]
# Pattern texts, not compiled objects: ``re`` compiles and caches them on the first failed reply, so a
# run without errors never pays for it.
OVERFLOW_PATTERN = "|".join(f"(?:{p})" for p in _OVERFLOW_PATTERNS)
# Cerebras answers an oversized prompt with a bare status line.
NO_BODY_PATTERN = r"^4(00|13)\s*(status code)?\s*\(no body\)"
# ``pi_core.llm.transport.origin_suffix``: where a request went, not what went wrong (a port or path may
# hold "500" or "too many tokens"), so no rule that judges an error text reads it.
ORIGIN_PATTERN = r" \[provider [^\]]*, [A-Z]+ [^\s\]]*\]"
NOT_OVERFLOW_PATTERN = r"^(Throttling error|Service unavailable):|rate limit|too many requests"


def without_origin(text: str) -> str:
    """``text`` without the ``[provider …]`` suffix the transport appends to an error."""
    return re.sub(ORIGIN_PATTERN, "", text)


def is_overflow_error_text(text: str) -> bool:
    """True when an error message names a context overflow (and is not rate limiting)."""
    text = without_origin(text) if text else text
    if not text or re.search(NOT_OVERFLOW_PATTERN, text, re.IGNORECASE):
        return False
    return bool(re.search(OVERFLOW_PATTERN, text, re.IGNORECASE) or re.search(NO_BODY_PATTERN, text, re.IGNORECASE))


def is_context_overflow(message: AssistantMessage, context_window: int | None = None) -> bool:
    if message.stop_reason == "error":
        return is_overflow_error_text(message.error_message or "")
    if context_window:
        used = message.usage.input + message.usage.cache_read
        if message.stop_reason == "stop" and used > context_window:
            return True
        if message.stop_reason == "length" and message.usage.output == 0 and used >= 0.99 * context_window:
            return True
    return False
