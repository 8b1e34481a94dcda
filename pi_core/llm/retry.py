"""Retrying failed model requests: the request layer here, plus helpers for the agent layer.

Two layers, as in Pi (docs/providers.md#retries, docs/sessions.md#auto-retry); each owns different failures:

1. **Request layer** (this module, ``stream_with_retry``; Pi leaves this to the vendor SDKs). Retries a
   request that failed *before any content arrived* (only ``start`` was emitted): HTTP 408/409/429/5xx/529,
   Anthropic's in-band ``overloaded_error``, dropped or refused connections. Backoff is exponential
   (``base_delay_s × 2^n`` capped at ``max_delay_s``) unless the server sent ``retry-after``, which is
   honoured; a server asking for more than ``max_retry_after_s`` fails at once. It forces the SDK's own
   retries off (``options.max_retries = 0``) so there is exactly one request-level loop, and it is
   invisible to the consumer: the held-back ``start`` of a failed attempt is never emitted, so the stream
   still has one ``start`` and one terminal event. ``RetryPolicy.from_settings`` reads
   ``retry.provider.{maxRetries,timeoutMs,maxRetryDelayMs}``.
2. **Agent layer** (the agent/session code, not here): after a turn ends in an error that
   ``is_retryable_error`` accepts (Pi's 0.73.1 regex, never a context overflow), it removes the failed
   message, waits ``agent_retry_delay_ms`` and continues, emitting ``auto_retry_*`` events. That covers
   failures *after* content streamed, which the request layer must not retry (content already shown).

A failure is retryable at the request layer when the provider recorded a ``FailureInfo``
(``pi_core.llm.stream``) saying so, or, lacking one, when its status is 408/409/429/≥500, or, lacking a
status, when its message matches the agent-layer regex. Aborts (``options.signal``) are never retried,
and an abort during the backoff wait ends the stream with ``aborted`` at once.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pi_core.llm.overflow import is_context_overflow, without_origin
from pi_core.llm.stream import error_event, failure_info, safe_stream
from pi_core.types import AssistantMessage

if TYPE_CHECKING:
    from pi_core.providers import ApiProvider, StreamOptions
    from pi_core.types import AssistantMessageEvent, Context, Model

RETRYABLE_ERROR_PATTERN = (  # compiled (and cached) by ``re`` on the first failed reply
    r"overloaded|provider.?returned.?error|rate.?limit|too many requests|429|500|502|503|504|"
    r"service.?unavailable|server.?error|internal.?error|network.?error|connection.?error|"
    r"connection.?refused|connection.?lost|websocket.?closed|websocket.?error|"
    r"websocket.?connection.?limit.?reached|other side closed|"
    r"fetch failed|upstream.?connect|reset before headers|socket hang up|ended without|"
    r"http2 request did not get a response|timed? out|timeout|terminated|retry delay"
)
RETRYABLE_STATUSES = frozenset({408, 409, 429})


def is_retryable_error(message: AssistantMessage) -> bool:
    """Agent-layer rule: an ``error`` reply with a retryable-looking message that is not an overflow,
    unless the provider marked the failure permanent (a refused connection to a local server)."""
    if message.stop_reason != "error" or not message.error_message:
        return False
    info = failure_info(message)
    if info is not None and info.permanent:
        return False
    if is_context_overflow(message):
        return False
    return bool(re.search(RETRYABLE_ERROR_PATTERN, without_origin(message.error_message), re.IGNORECASE))


def retry_after_from_headers(headers: Mapping[str, str]) -> float | None:
    """Seconds a server asks us to wait: ``retry-after-ms`` (OpenAI, Anthropic) before ``retry-after``."""
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if not value:
            continue
        try:
            return float(value) * scale
        except ValueError:
            if name == "retry-after":
                return _http_date_delay(value)
    return None


def _http_date_delay(value: str) -> float | None:
    """``Retry-After: <HTTP-date>`` as seconds from now (the SDKs accept both forms)."""
    import time
    from email.utils import parsedate_to_datetime

    try:
        moment = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    return moment.timestamp() - time.time()


def agent_retry_delay_ms(base_delay_ms: int, attempt: int) -> int:
    """Agent-layer backoff: ``base × 2^(attempt−1)`` (2, 4, 8 s with the default 2000 ms)."""
    return base_delay_ms << (attempt - 1)


@dataclass
class RetryPolicy:
    """Request-layer retry settings. No retries unless ``retry.provider.maxRetries`` asks, as in Pi 1.6.0: the
    agent layer retries transient failures, and a quota error reaches it at once; backoff 0.5 s doubling to 8 s."""

    max_retries: int = 0  # retries after the first attempt
    base_delay_s: float = 0.5
    max_delay_s: float = 8.0
    max_retry_after_s: float = 60.0  # a longer server-requested wait fails instead of sleeping
    timeout_s: float | None = None  # per network read/write, handed to the transport
    idle_timeout_s: float | None = None  # no stream progress for this long fails the attempt (None: 300 s)

    @classmethod
    def from_settings(cls, provider_settings: Mapping[str, Any] | None) -> RetryPolicy:  # open: the provider's settings, JSON (settings.json)
        """From the ``retry.provider`` settings table (camelCase keys as in Pi's settings.json)."""
        data = provider_settings or {}
        policy = cls()
        if data.get("maxRetries") is not None:
            policy.max_retries = int(data["maxRetries"])
        if data.get("timeoutMs") is not None:
            policy.timeout_s = float(data["timeoutMs"]) / 1000
        if data.get("maxRetryDelayMs") is not None:
            policy.max_retry_after_s = float(data["maxRetryDelayMs"]) / 1000
        return policy

    def backoff(self, retry_number: int) -> float:
        """Delay before retry ``retry_number`` (1-based) when the server gave no ``retry-after``."""
        return min(self.base_delay_s * 2.0 ** (retry_number - 1), self.max_delay_s)


@dataclass(frozen=True, repr=False)
class RetryNotice:
    """Passed to ``on_retry`` before each wait."""

    attempt: int  # the retry about to happen, 1-based
    max_retries: int
    delay_s: float
    error_message: str
    status: int | None


OnRetry = Callable[[RetryNotice], Awaitable[None] | None]


def is_request_retryable(message: AssistantMessage) -> bool:
    if message.stop_reason != "error":
        return False
    info = failure_info(message)
    if info is not None and info.retryable is not None:
        return info.retryable
    if info is not None and info.status is not None:
        return info.status in RETRYABLE_STATUSES or info.status >= 500
    return is_retryable_error(message)


async def stream_with_retry(provider: ApiProvider, model: Model, context: Context, options: StreamOptions,
                            policy: RetryPolicy | None = None,
                            on_retry: OnRetry | None = None) -> AsyncIterator[AssistantMessageEvent]:
    """``provider.stream`` with request-level retries (see the module docstring). Never raises."""
    policy = policy or RetryPolicy()
    idle = options.idle_timeout_s if options.idle_timeout_s is not None else policy.idle_timeout_s
    attempt_options = dataclasses.replace(options, max_retries=0, timeout_s=policy.timeout_s or options.timeout_s,
                                          idle_timeout_s=idle)
    retries = 0
    while True:
        failed: AssistantMessage | None = None
        held_start: AssistantMessageEvent | None = None
        committed = False
        events = safe_stream(provider, model, context, attempt_options)
        try:
            async for event in events:
                if not committed:
                    if event.type == "start":
                        held_start = event
                        continue
                    if event.type == "error" and event.error is not None and retries < policy.max_retries \
                            and is_request_retryable(event.error):
                        failed = event.error
                        break
                    committed = True
                    if held_start is not None:
                        yield held_start
                    if event.type == "error" and event.error is not None and retries and \
                            event.error.stop_reason == "error":
                        event.error.error_message = f"{event.error.error_message} (failed after {retries + 1} attempts)"
                yield event
        finally:
            await events.aclose()
        if failed is None:
            return
        info = failure_info(failed)
        retry_after = info.retry_after if info is not None else None
        if retry_after is not None and retry_after > policy.max_retry_after_s:
            failed.error_message = (f"{failed.error_message} (server requested a {retry_after:g}s retry delay, "
                                    f"more than the {policy.max_retry_after_s:g}s limit)")
            if held_start is not None:
                yield held_start
            yield error_event(failed, failed.error_message, False, info)
            return
        retries += 1
        delay = retry_after if retry_after is not None and retry_after >= 0 else policy.backoff(retries)
        if on_retry is not None:
            outcome = on_retry(RetryNotice(retries, policy.max_retries, delay, failed.error_message or "",
                                           info.status if info else None))
            if inspect.isawaitable(outcome):
                await outcome
        if await _aborted_during(options, delay):
            message = AssistantMessage(api=model.api, provider=model.provider, model=model.id)
            yield error_event(message, None, True)
            return


async def _aborted_during(options: StreamOptions, delay: float) -> bool:
    """Sleep ``delay`` seconds; True (early) if the request's signal is aborted meanwhile."""
    signal = options.signal
    if signal.aborted:
        return True
    if delay <= 0:
        return False
    waiter = asyncio.ensure_future(signal.wait())
    try:
        done, _ = await asyncio.wait({waiter}, timeout=delay)
    finally:
        waiter.cancel()
    return bool(done)
