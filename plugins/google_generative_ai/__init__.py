"""google-generative-ai: the Gemini API (``streamGenerateContent`` over SSE), over pi's SSE transport."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from pi_core import hookimpl

if TYPE_CHECKING:
    from pi_core.providers import StreamOptions
    from pi_core.types import AssistantMessageEvent, Context, Model


class GoogleGenerativeAIProvider:
    api = "google-generative-ai"

    def preload(self) -> None:
        """Import the request path ahead of the first prompt (the interactive app calls this in a thread)."""
        from pi_core.llm.transport import preload_http

        preload_http()
        import pi_plugins.google_generative_ai.streaming  # noqa: F401

    def stream(self, model: Model, context: Context, options: StreamOptions) -> AsyncIterator[AssistantMessageEvent]:
        from pi_plugins.google_generative_ai.streaming import stream_google

        return stream_google(model, context, options)  # not re-yielded: every event would pass one more generator


PROVIDER = GoogleGenerativeAIProvider()


@hookimpl
def pi_providers() -> list[GoogleGenerativeAIProvider]:
    return [PROVIDER]
