from __future__ import annotations

import pytest

from pi_core.llm.overflow import is_context_overflow
from pi_core.types import AssistantMessage, Usage


def failed(text: str) -> AssistantMessage:
    return AssistantMessage(stop_reason="error", error_message=text)


@pytest.mark.parametrize("text", [
    "prompt is too long: 213462 tokens > 200000 maximum",
    "Your input exceeds the context window of this model",
    "400 status code (no body)",
    "413 (no body)",
    '400 {"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 9 tokens"}}',
    "This model's maximum context length is 128000 tokens",
    "context_length_exceeded",
    "Request too large: request_too_large",
])
def test_overflow_messages(text: str) -> None:
    assert is_context_overflow(failed(text))


@pytest.mark.parametrize("text", [
    "429 status code (no body)",
    "Throttling error: too many tokens per minute",
    "Service unavailable: token limit exceeded",
    "rate limit: too many tokens",
    "Too many requests",
    "529 overloaded",
])
def test_rate_limits_are_not_overflow(text: str) -> None:
    assert not is_context_overflow(failed(text))


def test_silent_overflow_when_usage_exceeds_window() -> None:
    message = AssistantMessage(stop_reason="stop", usage=Usage(input=150_000, cache_read=60_000))
    assert is_context_overflow(message, 200_000)
    assert not is_context_overflow(message)
    assert not is_context_overflow(message, 300_000)


def test_length_stop_with_no_output_at_the_window_edge() -> None:
    message = AssistantMessage(stop_reason="length", usage=Usage(input=198_500, output=0))
    assert is_context_overflow(message, 200_000)
    message.usage.output = 3
    assert not is_context_overflow(message, 200_000)


def test_error_text_is_needed_for_error_replies() -> None:
    assert not is_context_overflow(AssistantMessage(stop_reason="error", error_message=None))
    assert not is_context_overflow(AssistantMessage(stop_reason="aborted", error_message="prompt is too long"))
