"""openai-completions: OpenAI Chat Completions and every OpenAI-compatible server, over pi's SSE transport."""

from __future__ import annotations

from pi_core import hookimpl
from pi_core.providers import LazyProvider

PROVIDER = LazyProvider("openai-completions", "pi_plugins.openai_completions.streaming:stream_completions",
                        preload=("pi_core.llm.http_client:preload_http",))


@hookimpl
def pi_providers() -> list[LazyProvider]:
    return [PROVIDER]
