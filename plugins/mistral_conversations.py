"""mistral-conversations: Mistral's own chat endpoint (``/v1/chat/completions``), with Mistral's rules.

Mistral's endpoint speaks the Chat Completions stream; its differences (9-character tool call ids, tool
names on results, no developer role, thinking as text) are Mistral rules of the ``openai-completions``
wire, which this plugin drives with the ``/v1`` path Mistral's catalog base URL leaves out.
"""

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
        from pi_plugins._delegate import stream_through
        from pi_plugins.openai_completions import PROVIDER as COMPLETIONS

        base = model.base_url.rstrip("/") or "https://api.mistral.ai"
        wire_model = model.model_copy(update={"api": "openai-completions",
                                              "base_url": base if base.endswith("/v1") else f"{base}/v1"})
        async for event in stream_through(COMPLETIONS, model, wire_model, context, options):
            yield event


PROVIDER = MistralConversationsProvider()


@hookimpl
def pi_providers() -> list[MistralConversationsProvider]:
    return [PROVIDER]
