"""google-generative-ai: the Gemini API (``streamGenerateContent`` over SSE), over pi's SSE transport."""

from __future__ import annotations

from pi_core import hookimpl
from pi_core.providers import LazyProvider

PROVIDER = LazyProvider("google-generative-ai", "pi_plugins.google_generative_ai.streaming:stream_google",
                        preload=("pi_core.llm.http_client:preload_http",))


@hookimpl
def pi_providers() -> list[LazyProvider]:
    return [PROVIDER]
