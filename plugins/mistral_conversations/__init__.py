"""mistral-conversations: Mistral's own chat stream (``/v1/chat/completions``) with Mistral's rules, over SSE."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from pi_core import hookimpl

if TYPE_CHECKING:
    from pi_core.providers import StreamOptions
    from pi_core.types import AssistantMessageEvent, Context, Model


class MistralConversationsProvider:
    api = "mistral-conversations"

    async def stream(self, model: Model, context: Context, options: StreamOptions) -> AsyncIterator[AssistantMessageEvent]:
        from pi_plugins.mistral_conversations.streaming import stream_mistral

        async for event in stream_mistral(model, context, options):
            yield event


PROVIDER = MistralConversationsProvider()


@hookimpl
def pi_providers() -> list[MistralConversationsProvider]:
    return [PROVIDER]
