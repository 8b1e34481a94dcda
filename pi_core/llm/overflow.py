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
OVERFLOW_RE = re.compile("|".join(f"(?:{p})" for p in _OVERFLOW_PATTERNS), re.IGNORECASE)
# Cerebras answers an oversized prompt with a bare status line.
NO_BODY_RE = re.compile(r"^4(00|13)\s*(status code)?\s*\(no body\)", re.IGNORECASE)
# ``pi_core.llm.transport.origin_suffix``: where a request went, not what went wrong (a port or path may
# hold "500" or "too many tokens"), so no rule that judges an error text reads it.
ORIGIN_RE = re.compile(r" \[provider [^\]]*, [A-Z]+ [^\s\]]*\]")
NOT_OVERFLOW_RE = re.compile(r"^(Throttling error|Service unavailable):|rate limit|too many requests", re.IGNORECASE)


def is_overflow_error_text(text: str) -> bool:
    """True when an error message names a context overflow (and is not rate limiting)."""
    text = ORIGIN_RE.sub("", text) if text else text
    if not text or NOT_OVERFLOW_RE.search(text):
        return False
    return bool(OVERFLOW_RE.search(text) or NO_BODY_RE.search(text))


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
