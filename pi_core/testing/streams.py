"""Helpers for testing provider plugins: collect a stream's events and check the event protocol.

``collect(provider.stream(model, context, options))`` runs the stream to its end (``asyncio.run``) and
returns the events; ``assert_protocol(events)`` checks docs/providers.md#stream-events; ``final(events)``
is the finished AssistantMessage. ``anthropic_model(server)`` / ``model_for(server, api)`` build a Model
pointing at a ``FakeModelServer``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any, TypedDict, Unpack

from pi_core.providers import StreamOptions
from pi_core.signals import AbortSignal
from pi_core.testing.fake_server import FakeModelServer
from pi_core.types import (
    AssistantMessage,
    AssistantMessageEvent,
    Context,
    Model,
    ModelCost,
    ToolDefinition,
    UserMessage,
)

if TYPE_CHECKING:
    import httpx2


def model_for(server: FakeModelServer, api: str, **fields: object) -> Model:
    """A Model served by ``server`` on ``api``'s wire (id ``test-model``, costs 3/15/0.3/3.75 per million)."""
    values: dict[str, Any] = {"id": "test-model", "name": "Test Model", "api": api, "provider": "test",
                              "base_url": server.base_url_for(api), "max_tokens": 16384,
                              "cost": ModelCost(input=3, output=15, cache_read=0.3, cache_write=3.75)}
    values.update(fields)
    return Model(**values)


def anthropic_model(server: FakeModelServer, **fields: object) -> Model:
    fields.setdefault("id", "claude-test")
    fields.setdefault("provider", "anthropic")
    return model_for(server, "anthropic-messages", **fields)



class ContextFields(TypedDict, total=False):
    """``Context``'s fields besides its messages, by keyword (``user_context``)."""

    system_prompt: str | None
    tools: list[ToolDefinition] | None


class StreamOptionsFields(TypedDict, total=False):
    """``StreamOptions``' fields by keyword (``options``); each has the type its field has there."""

    signal: AbortSignal
    api_key: str | None
    reasoning: str | None
    thinking_budgets: dict[str, int] | None
    max_tokens: int | None
    temperature: float | None
    session_id: str | None
    cache_retention: str | None
    headers: dict[str, str] | None
    timeout_s: float | None
    idle_timeout_s: float | None
    max_retries: int | None
    transport: str | None
    websocket_connect_timeout_s: float | None
    tool_choice: Any  # open: the provider's own tool_choice JSON
    metadata: dict[str, Any] | None  # open: request metadata, JSON the provider sends as given
    on_payload: Callable[[dict[str, Any], Model], object] | None  # open: the provider's JSON request body
    on_response: Callable[[dict[str, Any], Model], object] | None  # open: the response's status and headers, JSON
    on_headers: Callable[[dict[str, str | None], Model], object] | None
    on_stream_event: Callable[[Any, Model], object] | None  # open: one decoded wire event, the provider's JSON
    http_client: httpx2.AsyncClient | None  # injected (tests use MockTransport)
    env: dict[str, str] | None


def user_context(text: str = "Hello", **fields: Unpack[ContextFields]) -> Context:
    return Context(messages=[UserMessage(content=text)], **fields)


def options(**fields: Unpack[StreamOptionsFields]) -> StreamOptions:
    """StreamOptions with a dummy key and the SDK's own retries off (tests script every attempt)."""
    fields.setdefault("api_key", "test-key")
    fields.setdefault("max_retries", 0)
    return StreamOptions(**fields)


async def _collect(events: AsyncIterator[AssistantMessageEvent]) -> list[AssistantMessageEvent]:
    return [event async for event in events]


def collect(events: AsyncIterator[AssistantMessageEvent]) -> list[AssistantMessageEvent]:
    return asyncio.run(_collect(events))


def final(events: list[AssistantMessageEvent]) -> AssistantMessage:
    last = events[-1]
    assert last.type in ("done", "error")
    assert last.final is not None
    return last.final


def types(events: list[AssistantMessageEvent]) -> list[str]:
    return [event.type for event in events]


def assert_protocol(events: list[AssistantMessageEvent]) -> None:
    """docs/providers.md#stream-events: start first (if any), blocks start/delta*/end in order, one terminal last."""
    kinds = types(events)
    assert kinds[-1] in ("done", "error")
    assert sum(k in ("done", "error") for k in kinds) == 1
    body = kinds[:-1]
    if body:
        assert body[0] == "start" and body.count("start") == 1
    open_index: int | None = None
    next_index = 0
    for event in events[1:-1]:
        kind = event.type
        if kind.endswith("_start"):
            assert open_index is None, f"{kind} while block {open_index} is open"
            assert event.content_index == next_index
            open_index = event.content_index
            next_index += 1
        elif kind.endswith(("_delta", "_end")):
            assert event.content_index == open_index, f"{kind} for {event.content_index}, open {open_index}"
            if kind.endswith("_end"):
                open_index = None
        assert event.partial is events[0].partial
