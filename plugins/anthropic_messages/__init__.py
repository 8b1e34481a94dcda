"""anthropic-messages: Anthropic's Messages API (Claude), streamed over pi's SSE transport."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from pi_core.hookspecs import hookimpl

if TYPE_CHECKING:
    from pi_core.providers import StreamOptions
    from pi_core.types import AssistantMessageEvent, Context, Model


class AnthropicMessages:
    """The registered provider; the implementation loads on the first request."""

    api = "anthropic-messages"

    def preload(self) -> None:
        """Import the request path ahead of the first prompt (the interactive app calls this in a thread)."""
        from pi_core.llm.transport import preload_http

        preload_http()
        import pi_plugins.anthropic_messages.provider  # noqa: F401

    def __init__(self) -> None:
        self._impl: Any = None

    def stream(self, model: Model, context: Context, options: StreamOptions) -> AsyncIterator[AssistantMessageEvent]:
        if self._impl is None:
            from pi_plugins.anthropic_messages.provider import AnthropicMessagesProvider

            self._impl = AnthropicMessagesProvider()
        return self._impl.stream(model, context, options)


@hookimpl
def pi_providers() -> list[AnthropicMessages]:
    return [AnthropicMessages()]
