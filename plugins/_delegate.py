"""Serve one API through another plugin's wire, with the messages labelled as the API the model names."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pi_core.providers import StreamOptions
    from pi_core.types import AssistantMessageEvent, Context, Model


async def stream_through(wire: Any, model: Model, wire_model: Model, context: Context,
                         options: StreamOptions) -> AsyncIterator[AssistantMessageEvent]:
    """Stream ``wire_model`` on ``wire``; every message the events carry says ``model.api`` again."""
    async for event in wire.stream(wire_model, context, options):
        for message in (event.partial, event.message, event.error):
            if message is not None:
                message.api = model.api
        yield event
