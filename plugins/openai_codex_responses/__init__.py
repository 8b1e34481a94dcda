"""openai-codex-responses: the ChatGPT Plus/Pro Codex endpoint (``/codex/responses``), over pi's SSE transport."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from pi_core import hookimpl

if TYPE_CHECKING:
    from pi_core.providers import StreamOptions
    from pi_core.types import AssistantMessageEvent, Context, Model


class OpenAICodexResponsesProvider:
    api = "openai-codex-responses"

    async def stream(self, model: Model, context: Context, options: StreamOptions) -> AsyncIterator[AssistantMessageEvent]:
        from pi_plugins.openai_codex_responses.streaming import stream_codex

        async for event in stream_codex(model, context, options):
            yield event


PROVIDER = OpenAICodexResponsesProvider()


@hookimpl
def pi_providers() -> list[OpenAICodexResponsesProvider]:
    return [PROVIDER]
