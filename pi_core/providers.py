"""The provider contract: an API implementation turns a Context into a stream of AssistantMessageEvents.

A provider plugin returns ``ApiProvider`` objects from ``pi_providers``. Once called, ``stream`` never
raises: every failure (HTTP error, dropped connection, abort, missing key) ends the stream with one
``error`` event whose message has ``stop_reason`` "error" or "aborted" and an ``error_message``.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from pi_core.signals import AbortSignal

if TYPE_CHECKING:
    import httpx2

    from pi_core.types import AssistantMessageEvent, Context, Message, Model


@dataclass(eq=False, repr=False)
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
    # Wires that speak more than one transport (Codex: SSE or WebSocket) read ``transport`` (settings.json's
    # ``transport``: "auto", "sse", "websocket", "websocket-cached"; None is "auto") and the WebSocket
    # connect timeout (None: the wire's default, 15 s; 0 = off).
    transport: str | None = None
    websocket_connect_timeout_s: float | None = None
    tool_choice: Any = None  # open: the provider's own tool_choice JSON
    metadata: dict[str, Any] | None = None  # open: request metadata, JSON the provider sends as given
    # Plugin hooks on the wire (the session sets only those some plugin implements). Each may return an
    # awaitable, which the provider awaits: on_payload may replace the body (None keeps it), on_headers edits
    # the headers in place (None deletes one), on_response sees {"status", "headers"}, on_stream_event each
    # decoded wire event before it is normalised.
    on_payload: Callable[[dict[str, Any], Model], object] | None = None  # open: the provider's JSON request body and response headers/status
    on_response: Callable[[dict[str, Any], Model], object] | None = None  # open: the provider's JSON request body and response headers/status
    on_headers: Callable[[dict[str, str | None], Model], object] | None = None
    on_stream_event: Callable[[Any, Model], object] | None = None  # open: one decoded wire event, the provider's JSON
    http_client: httpx2.AsyncClient | None = None  # injected (tests use MockTransport)
    env: dict[str, str] | None = None  # the provider's settings from its stored credential (over the environment)


async def resolved(value: Any) -> Any:  # open: a plugin callback's result (a replaced JSON body, ...) as it returned it
    """A StreamOptions callback's result, awaited when the callback was async (plugin hooks may be)."""
    return await value if inspect.isawaitable(value) else value


class ApiProvider(Protocol):
    """One wire API, e.g. ``anthropic-messages``. ``stream`` is an async generator of events."""

    api: str

    def stream(self, model: Model, context: Context, options: StreamOptions) -> AsyncIterator[AssistantMessageEvent]:
        ...


class LazyProvider:
    """``LazyProvider(api, "module:function")``: a registered wire whose code loads on its first request, so a
    start that never calls it imports none of it. ``function(model, context, options)`` is the stream; its
    events are handed over, not re-yielded (every event would pass one more generator). ``preload`` names more
    ``module:function`` callables that ``preload()`` runs after importing the stream's module (the interactive
    app preloads in a thread while the user types)."""

    def __init__(self, api: str, target: str, *, preload: tuple[str, ...] = ()) -> None:
        self.api = api
        self.target = target
        self.warm_up = preload
        self._stream: Callable[[Model, Context, StreamOptions], AsyncIterator[AssistantMessageEvent]] | None = None

    def stream(self, model: Model, context: Context, options: StreamOptions) -> AsyncIterator[AssistantMessageEvent]:
        if self._stream is None:
            self._stream = _load(self.target)
        return self._stream(model, context, options)

    def preload(self) -> None:
        if self._stream is None:
            self._stream = _load(self.target)
        for target in self.warm_up:
            _load(target)()

    def __repr__(self) -> str:
        return f"LazyProvider({self.api!r}, {self.target!r})"


def _load(target: str) -> Any:
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)


@dataclass
class ModelRouteRequest:
    """One request made with a virtual model (a ``VirtualModel.route`` gets it). ``reason``: "user" (first request after a user message),
    "continuation" (after tool results) or "direct" (outside the agent loop: compaction, plugins).
    ``state`` is the router state last stored on this session branch (None for "direct")."""

    model: Model
    thinking_level: str
    reason: str
    messages: list[Message]
    find: Callable[[str, str], Model | None]  # a catalog model by provider and id
    state: Any = None  # open: the router plugin's own JSON
    signal: AbortSignal = field(default_factory=AbortSignal)


@dataclass
class ModelRoute:
    """A physical model and thinking level for one request; ``state`` (JSON) is stored when not None."""

    model: Model
    thinking_level: str = "off"
    state: Any = None  # open: the router plugin's own JSON


@dataclass(eq=False, repr=False)
class VirtualModel:
    """A selectable model (``pi_virtual_models``); ``route(ModelRouteRequest)`` returns a ``ModelRoute`` (or an
    awaitable of one) naming the physical model for each request (pi_core.models.virtual)."""

    provider: str
    id: str
    name: str
    route: Callable[[ModelRouteRequest], object]
    thinking_levels: list[str] = field(default_factory=lambda: ["off"])
    context_window: int = 128_000
    max_tokens: int = 16_384
