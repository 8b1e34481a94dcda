"""The provider contract: an API implementation turns a Context into a stream of AssistantMessageEvents.

A provider plugin returns ``ApiProvider`` objects from ``pi_providers``. Once called, ``stream`` never
raises: every failure (HTTP error, dropped connection, abort, missing key) ends the stream with one
``error`` event whose message has ``stop_reason`` "error" or "aborted" and an ``error_message``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from pi_core.signals import AbortSignal

if TYPE_CHECKING:
    from pi_core.types import AssistantMessageEvent, Context, Model


@dataclass
class StreamOptions:
    """Per-request options (docs/providers.md#request-options). ``reasoning`` is None when thinking is off."""

    signal: AbortSignal = field(default_factory=AbortSignal)
    api_key: str | None = None
    reasoning: str | None = None
    thinking_budgets: dict[str, int] | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    session_id: str | None = None
    cache_retention: str | None = None
    headers: dict[str, str] | None = None
    timeout_s: float | None = None  # per network read/write (the transport's default: 600 s)
    idle_timeout_s: float | None = None  # no complete stream event for this long ends the request (default 300 s; 0 = off)
    max_retries: int | None = None
    tool_choice: Any = None
    metadata: dict[str, Any] | None = None
    on_payload: Callable[[dict[str, Any], Model], dict[str, Any] | None] | None = None
    on_response: Callable[[dict[str, Any], Model], None] | None = None
    http_client: Any = None  # an injected httpx2.AsyncClient (tests use MockTransport)


class ApiProvider(Protocol):
    """One wire API, e.g. ``anthropic-messages``. ``stream`` is an async generator of events."""

    api: str

    def stream(self, model: Model, context: Context, options: StreamOptions) -> AsyncIterator[AssistantMessageEvent]:
        ...
