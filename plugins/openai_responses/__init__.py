"""openai-responses: the OpenAI Responses API (reasoning summaries, encrypted reasoning replay), over pi's SSE transport."""

from __future__ import annotations

from pi_core import hookimpl
from pi_core.providers import LazyProvider

PROVIDER = LazyProvider("openai-responses", "pi_plugins.openai_responses.streaming:stream_responses",
                        preload=("pi_core.llm.http_client:preload_http",))


@hookimpl
def pi_providers() -> list[LazyProvider]:
    return [PROVIDER]
