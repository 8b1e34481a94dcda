"""mistral-conversations: Mistral's own chat stream (``/v1/chat/completions``) with Mistral's rules, over SSE."""

from __future__ import annotations

from pi_core import hookimpl
from pi_core.providers import LazyProvider

PROVIDER = LazyProvider("mistral-conversations", "pi_plugins.mistral_conversations.streaming:stream_mistral",
                        preload=("pi_core.llm.http_client:preload_http",))


@hookimpl
def pi_providers() -> list[LazyProvider]:
    return [PROVIDER]
