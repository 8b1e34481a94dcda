"""anthropic-messages: Anthropic's Messages API (Claude), streamed over pi's SSE transport."""

from __future__ import annotations

from pi_core import hookimpl
from pi_core.providers import LazyProvider

PROVIDER = LazyProvider("anthropic-messages", "pi_plugins.anthropic_messages.provider:stream_messages",
                        preload=("pi_core.llm.http_client:preload_http",))


@hookimpl
def pi_providers() -> list[LazyProvider]:
    return [PROVIDER]
