"""Virtual models (docs/models.md#virtual-models): catalog entries a plugin routes to a physical model per request.

``catalog_entry`` lists a ``VirtualModel`` in the catalog (``--model``, ``--list-models``);
``routed_stream`` wraps the session's stream function: a request made with a virtual model asks its router for
a ``ModelRoute``, stores the returned router state on the session branch (custom entry
``pi.virtual-model-state``, so it follows the tree) and sends the request to the physical model, with the
route's thinking level as the reasoning effort.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol

from pi_core.errors import PiError
from pi_core.providers import VirtualModel
from pi_core.signals import AbortSignal
from pi_core.types import THINKING_LEVELS, Model

if TYPE_CHECKING:
    from pi_core.providers import StreamOptions
    from pi_core.sessions.manager import SessionManager
    from pi_core.types import AssistantMessageEvent, Context

STATE_ENTRY = "pi.virtual-model-state"
VIRTUAL_API = "pi-virtual"  # the ``api`` of a virtual model's catalog entry: never sent to a wire
StreamFn = Callable[..., AsyncIterator["AssistantMessageEvent"]]


@dataclass
class ModelRouteRequest:
    """One request made with a virtual model. ``reason``: "user" (first request after a user message),
    "continuation" (after tool results) or "direct" (outside the agent loop: compaction, plugins).
    ``state`` is the router state last stored on this session branch (None for "direct")."""

    model: Model
    thinking_level: str
    reason: str
    messages: list[Any]
    find: Callable[[str, str], Model | None]  # a catalog model by provider and id
    state: Any = None
    signal: AbortSignal = field(default_factory=AbortSignal)


@dataclass
class ModelRoute:
    """A physical model and thinking level for one request; ``state`` (JSON) is stored when not None."""

    model: Model
    thinking_level: str = "off"
    state: Any = None


class Catalog(Protocol):
    """What routing needs of the model registry."""

    def virtual_model(self, model: Model) -> VirtualModel | None: ...
    def find(self, provider: str, model_id: str) -> Model | None: ...
    def api_key_for(self, model: Model, override: str | None = None) -> str: ...


def catalog_entry(virtual: VirtualModel) -> Model:
    levels = {level: (level if level in virtual.thinking_levels else None) for level in THINKING_LEVELS}
    return Model(id=virtual.id, name=virtual.name, api=VIRTUAL_API, provider=virtual.provider,
                 reasoning=virtual.thinking_levels != ["off"], thinking_level_map=levels,
                 input=["text", "image"], context_window=virtual.context_window, max_tokens=virtual.max_tokens)


def branch_state(store: SessionManager, model: Model) -> Any:
    """The router state last stored for ``model`` on the current branch (None when there is none)."""
    for entry in reversed(store.get_branch()):
        data = entry.get("data") if entry.get("type") == "custom" and entry.get("customType") == STATE_ENTRY else None
        if isinstance(data, dict) and (data.get("provider"), data.get("modelId")) == (model.provider, model.id):
            return data.get("state")
    return None


def _reason(context: Context) -> str:
    last = context.messages[-1] if context.messages else None
    return "user" if last is not None and last.role == "user" else "continuation"


async def _route(virtual: VirtualModel, request: ModelRouteRequest) -> ModelRoute:
    route = virtual.route(request)
    if inspect.isawaitable(route):
        route = await route
    if not isinstance(route, ModelRoute):
        raise PiError(f"Virtual model {virtual.provider}/{virtual.id} returned no route")
    return route


def routed_stream(registry: Catalog, store: SessionManager | None, inner: StreamFn, *,
                  direct: bool = False) -> StreamFn:
    """``inner`` with virtual models resolved; ``direct`` marks requests made outside the agent loop."""

    async def stream(model: Model, context: Context, options: StreamOptions) -> AsyncIterator[AssistantMessageEvent]:
        virtual = registry.virtual_model(model)
        if virtual is None:
            async for event in inner(model, context, options):
                yield event
            return
        from pi_core.llm.stream import MessageBuilder

        state = None if direct or store is None else branch_state(store, model)
        request = ModelRouteRequest(model=model, thinking_level=options.reasoning or "off",
                                    reason="direct" if direct else _reason(context), messages=list(context.messages),
                                    find=registry.find, state=state, signal=options.signal)
        try:
            route = await _route(virtual, request)
            if registry.virtual_model(route.model) is not None:
                raise PiError(f"Virtual model {virtual.provider}/{virtual.id} routed to another virtual model")
            key = await asyncio.to_thread(registry.api_key_for, route.model)
        except Exception as err:  # noqa: BLE001 - a router's failure ends this request with an error response
            yield MessageBuilder(model).error(err if isinstance(err, PiError) else PiError(
                f"Virtual model {virtual.provider}/{virtual.id} failed to route: {err}"))
            return
        if not direct and store is not None and route.state is not None and route.state is not state:
            store.append_custom_entry(STATE_ENTRY, {"provider": model.provider, "modelId": model.id,
                                                    "state": route.state})
        level = None if route.thinking_level == "off" else route.thinking_level
        async for event in inner(route.model, context, replace(options, reasoning=level, api_key=key)):
            yield event

    return stream
