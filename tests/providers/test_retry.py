"""Request-level retries (stream_with_retry) through the Anthropic plugin and the fake server."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from pi_plugins.anthropic_messages import PROVIDER as ANTHROPIC

from pi_core.llm.retry import (
    RetryNotice,
    RetryPolicy,
    agent_retry_delay_ms,
    is_retryable_error,
    stream_with_retry,
)
from pi_core.testing.fake_server import FakeModelServer, Reply
from pi_core.testing.streams import (
    anthropic_model,
    assert_protocol,
    collect,
    final,
    options,
    types,
    user_context,
)
from pi_core.types import AssistantMessage

FAST = RetryPolicy(max_retries=2, base_delay_s=0.01, max_delay_s=0.02)


def retrying(server: FakeModelServer, *replies: Reply, policy: RetryPolicy = FAST, **opts: Any):
    server.add(*replies)
    notices: list[RetryNotice] = []
    events = collect(stream_with_retry(ANTHROPIC, anthropic_model(server), user_context(),
                                       options(**opts), policy, notices.append))
    assert_protocol(events)
    return events, notices


def test_rate_limit_honours_retry_after_then_succeeds(pi_fake_server: FakeModelServer) -> None:
    events, notices = retrying(pi_fake_server, Reply.rate_limited(retry_after=0.02), Reply(text="finally"))
    assert types(events)[0] == "start" and types(events).count("start") == 1
    assert final(events).text() == "finally"
    assert [(n.attempt, n.delay_s, n.status) for n in notices] == [(1, 0.02, 429)]
    assert "429" in notices[0].error_message
    # The transport's own retries are off: this loop is the only one (one request per notice, plus the last).
    assert len(pi_fake_server.requests) == 2


def test_server_errors_back_off_exponentially_then_give_up(pi_fake_server: FakeModelServer) -> None:
    policy = RetryPolicy(max_retries=2, base_delay_s=0.01, max_delay_s=1)
    events, notices = retrying(pi_fake_server, Reply.overloaded(), Reply.http_error(503), Reply.overloaded(),
                               policy=policy)
    assert types(events) == ["error"]
    origin = f" [provider anthropic, POST {pi_fake_server.url}/v1/messages]"
    assert final(events).error_message == (
        '529 {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}'
        f'{origin} (failed after 3 attempts)')
    assert [n.delay_s for n in notices] == [0.01, 0.02]
    assert len(pi_fake_server.requests) == 3


def test_bad_request_is_not_retried(pi_fake_server: FakeModelServer) -> None:
    events, notices = retrying(pi_fake_server, Reply.http_error(400, "bad tool schema"))
    assert notices == [] and len(pi_fake_server.requests) == 1
    assert final(events).error_message == (
        '400 {"type": "error", "error": {"type": "invalid_request_error", "message": "bad tool schema"}}'
        f' [provider anthropic, POST {pi_fake_server.url}/v1/messages]')


def test_empty_script_is_not_retried(pi_fake_server: FakeModelServer) -> None:
    events, notices = retrying(pi_fake_server)
    assert notices == [] and "no reply scripted" in (final(events).error_message or "")


def test_in_band_overloaded_before_content_is_retried(pi_fake_server: FakeModelServer) -> None:
    events, notices = retrying(pi_fake_server, Reply(stream_error="overloaded_error", error_message="Overloaded"),
                               Reply(text="ok"))
    assert len(notices) == 1 and "overloaded_error" in notices[0].error_message
    assert types(events).count("start") == 1 and final(events).text() == "ok"


def test_connection_drop_before_content_is_retried(pi_fake_server: FakeModelServer) -> None:
    events, notices = retrying(pi_fake_server, Reply(text="lost", disconnect_after=1), Reply(text="ok"))
    assert len(notices) == 1 and final(events).text() == "ok"


def test_failure_after_content_is_left_to_the_agent_layer(pi_fake_server: FakeModelServer) -> None:
    events, notices = retrying(pi_fake_server, Reply(text="shown already", stream_error="overloaded_error"),
                               Reply(text="never"))
    assert notices == [] and pi_fake_server.pending == 1
    message = final(events)
    assert message.stop_reason == "error" and message.text() == "shown already"
    assert is_retryable_error(message)


def test_retry_after_beyond_the_limit_fails_at_once(pi_fake_server: FakeModelServer) -> None:
    policy = RetryPolicy(max_retries=3, max_retry_after_s=1)
    events, notices = retrying(pi_fake_server, Reply.rate_limited(retry_after=120), policy=policy)
    assert notices == [] and len(pi_fake_server.requests) == 1
    assert final(events).error_message.endswith(  # type: ignore[union-attr]
        "(server requested a 120s retry delay, more than the 1s limit)")
    assert is_retryable_error(final(events))


def test_abort_during_the_backoff_wait(pi_fake_server: FakeModelServer) -> None:
    pi_fake_server.add(Reply.rate_limited(retry_after=30), Reply(text="too late"))
    opts = options()
    timer = threading.Timer(0.1, opts.signal.abort)

    async def go() -> list:
        timer.start()
        stream = stream_with_retry(ANTHROPIC, anthropic_model(pi_fake_server), user_context(), opts, FAST)
        return [event async for event in stream]

    events = asyncio.run(asyncio.wait_for(go(), 10))
    assert types(events) == ["error"]
    assert (final(events).stop_reason, final(events).error_message) == ("aborted", "Request was aborted")
    assert len(pi_fake_server.requests) == 1


def test_async_on_retry_is_awaited(pi_fake_server: FakeModelServer) -> None:
    pi_fake_server.add(Reply.http_error(500), Reply(text="ok"))
    seen: list[int] = []

    async def on_retry(notice: RetryNotice) -> None:
        await asyncio.sleep(0)
        seen.append(notice.attempt)

    events = collect(stream_with_retry(ANTHROPIC, anthropic_model(pi_fake_server), user_context(),
                                       options(), FAST, on_retry))
    assert seen == [1] and final(events).text() == "ok"


def test_policy_from_settings_and_backoff() -> None:
    policy = RetryPolicy.from_settings({"maxRetries": 5, "timeoutMs": 30000, "maxRetryDelayMs": 10000})
    assert (policy.max_retries, policy.timeout_s, policy.max_retry_after_s) == (5, 30.0, 10.0)
    assert RetryPolicy.from_settings(None) == RetryPolicy()
    assert [RetryPolicy().backoff(n) for n in (1, 2, 3, 6)] == [0.5, 1.0, 2.0, 8.0]
    assert [agent_retry_delay_ms(2000, n) for n in (1, 2, 3)] == [2000, 4000, 8000]


@pytest.mark.parametrize("text,retryable", [
    ('529 {"type":"error","error":{"type":"overloaded_error"}}', True),
    ("429 Too Many Requests", True),
    ("Connection error.", True),
    ("Request timed out.", True),
    ("fetch failed", True),
    ("socket hang up", True),
    ('400 {"error": "invalid tool"}', False),
    ("prompt is too long: 300000 tokens > 200000 maximum (500)", False),
])
def test_agent_layer_retryable_errors(text: str, retryable: bool) -> None:
    assert is_retryable_error(AssistantMessage(stop_reason="error", error_message=text)) is retryable


def test_aborted_and_successful_replies_are_never_retryable() -> None:
    assert not is_retryable_error(AssistantMessage(stop_reason="aborted", error_message="timeout"))
    assert not is_retryable_error(AssistantMessage(stop_reason="stop"))


def test_retry_after_headers_prefer_milliseconds_and_skip_garbage() -> None:
    from pi_core.llm.retry import retry_after_from_headers

    assert retry_after_from_headers({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert retry_after_from_headers({"retry-after": "2"}) == 2.0
    assert retry_after_from_headers({"retry-after-ms": "soon", "retry-after": "3"}) == 3.0
    assert retry_after_from_headers({}) is None
