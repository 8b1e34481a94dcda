"""Requests made with a virtual model (docs/models.md#virtual-models): ``routed_stream`` wraps the session's
stream function; a request made with a virtual model asks its router for a ``ModelRoute``, stores the returned
router state on the session branch and is sent to the physical model, with the route's thinking level as the
reasoning effort. A router that fails ends that request with an error response.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from pi_core.errors import PiError
from pi_core.llm.stream import MessageBuilder
from pi_core.models.virtual import (
    STATE_ENTRY,
    Catalog,
    ModelRoute,
    ModelRouteRequest,
    branch_state,
)

if TYPE_CHECKING:
    from pi_core.providers import StreamOptions, VirtualModel
    from pi_core.sessions.manager import SessionManager
    from pi_core.types import AssistantMessageEvent, Context, Model

StreamFn = Callable[..., AsyncIterator["AssistantMessageEvent"]]


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
