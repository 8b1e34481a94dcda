"""Put a provider's stored credential on each request, and give an OAuth token one more chance after a 401.

``authorized_stream(registry, inner)`` wraps a stream function (the session's ``stream_fn``): the model a
wire sees has its base URL placeholders filled and its sign-in's endpoint and headers applied
(``ModelRegistry.request_model``). When a request with an OAuth token is refused with 401 before anything
streamed, the token is refreshed once (even if it looked valid: it may have been revoked or rotated
elsewhere) and the request sent again; a refresh that fails ends the stream with its own message.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from pi_core.errors import PiError

if TYPE_CHECKING:
    from pi_core.models.registry import ModelRegistry
    from pi_core.providers import StreamOptions
    from pi_core.types import AssistantMessageEvent, Context, Model

StreamFn = Callable[..., AsyncIterator["AssistantMessageEvent"]]


def _status(event: AssistantMessageEvent) -> int | None:
    from pi_core.llm.stream import failure_info

    if event.error is None:
        return None
    info = failure_info(event.error)
    if info is not None and info.status is not None:
        return info.status
    text = (event.error.error_message or "").lstrip()
    return 401 if text.startswith("401") else None


def _failed(model: Model, err: PiError) -> AssistantMessageEvent:
    from pi_core.llm.stream import MessageBuilder

    return MessageBuilder(model).error(err)


def authorized_stream(registry: ModelRegistry, inner: StreamFn) -> StreamFn:
    async def stream(model: Model, context: Context, options: StreamOptions) -> AsyncIterator[AssistantMessageEvent]:
        stored_env = registry.provider_env(model.provider)
        if stored_env and options.env is None:  # a credential's settings (Vertex project, AWS profile...) for the wire
            options = replace(options, env=stored_env)
        oauth = registry.uses_oauth(model.provider)
        try:  # a token refresh is network I/O: off the event loop
            sent = await asyncio.to_thread(registry.request_model, model) if oauth else registry.request_model(model)
        except PiError as err:
            yield _failed(model, err)
            return
        if not oauth:
            async for event in inner(sent, context, options):
                yield event
            return
        held: list[AssistantMessageEvent] = []
        events: Any = inner(sent, context, options)  # an async generator: closed early on a 401
        async for event in events:
            if event.type == "start" and not held:
                held.append(event)  # wait: a 401 may follow, and then this request never happened
                continue
            if event.type == "error" and _status(event) == 401 and not options.signal.aborted:
                await events.aclose()
                async for retried in _retry(registry, model, context, options, inner):
                    yield retried
                return
            for early in held:
                yield early
            held.clear()
            yield event
            break
        for early in held:
            yield early
        async for event in events:
            yield event

    return stream


async def _retry(registry: ModelRegistry, model: Model, context: Context, options: StreamOptions,
                 inner: StreamFn) -> AsyncIterator[AssistantMessageEvent]:
    try:
        auth: Any = await asyncio.to_thread(registry.oauth_auth, model.provider, force=True)
        sent = await asyncio.to_thread(registry.request_model, model)
    except PiError as err:
        yield _failed(model, err)
        return
    async for event in inner(sent, context, replace(options, api_key=auth.api_key)):
        yield event
