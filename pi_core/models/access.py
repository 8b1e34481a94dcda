"""``ctx.model_registry``: the session's models and credentials, and one-off model calls through its providers."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from pi_core.providers import StreamOptions
from pi_core.signals import AbortSignal
from pi_core.types import AssistantMessage, Context, Model, TextContent, UserMessage

if TYPE_CHECKING:
    from pi_core.session.parts import ModelSource, StreamFn
    from pi_core.types import Message


class SessionModels:
    """What a plugin may ask of the models: find one, list those with credentials, call one (``complete``)."""

    def __init__(self, models: ModelSource | None, stream_fn: StreamFn, api_key: Callable[[], str | None]) -> None:
        self._models = models
        self._stream_fn = stream_fn
        self._api_key = api_key  # --api-key, when given: it wins for every model

    def find(self, provider: str, model_id: str) -> Model | None:
        return self._models.find(provider, model_id) if self._models is not None else None

    def available_models(self) -> list[Model]:
        return list(self._models.available_models()) if self._models is not None else []

    def has_auth(self, model: Model | str) -> bool:
        provider = model if isinstance(model, str) else model.provider
        return self._api_key() is not None or (self._models is not None and self._models.has_auth(provider))

    async def complete(self, model: Model, messages: Sequence[str | Message], *, system_prompt: str | None = None,
                       reasoning: str | None = None, max_tokens: int | None = None,
                       signal: AbortSignal | None = None) -> AssistantMessage:
        """One model call outside the conversation (strings become user messages); the final message,
        whose ``stop_reason`` is "error" with an ``error_message`` when it failed."""
        key = self._api_key() or (self._models.api_key_for(model) if self._models is not None else None)
        wanted = [UserMessage(content=[TextContent(text=m)]) if isinstance(m, str) else m for m in messages]
        context = Context(system_prompt=system_prompt or "", messages=wanted)
        options = StreamOptions(signal=signal or AbortSignal(), api_key=key, reasoning=reasoning, max_tokens=max_tokens)
        final: AssistantMessage | None = None
        async for event in self._stream_fn(model, context, options):
            if event.type in ("done", "error"):
                final = event.final
        if final is None:
            return AssistantMessage(api=model.api, provider=model.provider, model=model.id, stop_reason="error",
                                    error_message="Provider stream ended without a result")
        return final
