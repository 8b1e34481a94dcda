"""openai-codex-responses: the ChatGPT Plus/Pro Codex endpoint (``/codex/responses``), over pi's SSE transport."""

from __future__ import annotations

from pi_core import hookimpl
from pi_core.providers import LazyProvider

PROVIDER = LazyProvider("openai-codex-responses", "pi_plugins.openai_codex_responses.streaming:stream_codex",
                        preload=("pi_core.llm.http_client:preload_http",))


@hookimpl
def pi_providers() -> list[LazyProvider]:
    return [PROVIDER]
