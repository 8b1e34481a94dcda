"""openai-responses: the OpenAI Responses API (reasoning summaries, encrypted reasoning replay), via the openai SDK."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from pi_core import hookimpl

if TYPE_CHECKING:
    from pi_core.providers import StreamOptions
    from pi_core.types import AssistantMessageEvent, Context, Model


class OpenAIResponsesProvider:
    api = "openai-responses"

    async def stream(self, model: Model, context: Context, options: StreamOptions) -> AsyncIterator[AssistantMessageEvent]:
        from pi_plugins.openai_responses.streaming import stream_responses

        async for event in stream_responses(model, context, options):
            yield event


PROVIDER = OpenAIResponsesProvider()


@hookimpl
def pi_providers() -> list[OpenAIResponsesProvider]:
    return [PROVIDER]
