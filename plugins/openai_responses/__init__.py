"""openai-responses: the OpenAI Responses API (reasoning summaries, encrypted reasoning replay), over pi's SSE transport."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from pi_core import hookimpl

if TYPE_CHECKING:
    from pi_core.providers import StreamOptions
    from pi_core.types import AssistantMessageEvent, Context, Model


class OpenAIResponsesProvider:
    api = "openai-responses"

    def preload(self) -> None:
        """Import the request path ahead of the first prompt (the interactive app calls this in a thread)."""
        from pi_core.llm.transport import preload_http

        preload_http()
        import pi_plugins.openai_responses.streaming  # noqa: F401

    def stream(self, model: Model, context: Context, options: StreamOptions) -> AsyncIterator[AssistantMessageEvent]:
        from pi_plugins.openai_responses.streaming import stream_responses

        return stream_responses(model, context, options)  # not re-yielded: every event would pass one more generator


PROVIDER = OpenAIResponsesProvider()


@hookimpl
def pi_providers() -> list[OpenAIResponsesProvider]:
    return [PROVIDER]
