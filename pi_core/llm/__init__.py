"""pi's LLM layer: one event protocol for every provider, plus the shared pieces provider plugins use.

Modules (each documents its API): ``stream`` (MessageBuilder, error_event, sanitize_surrogates),
``tool_json`` (streamed tool arguments, through jiter), ``transform`` (cross-provider history hand-off),
``overflow``, ``retry`` (RetryPolicy, stream_with_retry); the layers the session's stream function is wrapped
in: ``authorized`` (stored credentials, an OAuth token refreshed after a 401) and ``routed`` (virtual models).
What a model is (its cost, thinking levels, keys) is ``pi_core.models``, below this wing.

Conveniences here:
- ``stream_simple(provider, model, context, options, retry=None)``: checks the api matches, clamps the
  reasoning level to what the model supports, fills the API key from the environment when none is given,
  and streams (through ``stream_with_retry`` when a RetryPolicy is given). Never raises.
- ``complete(...)``: the same, returning the final AssistantMessage.
Nothing heavy is imported here: vendor SDKs load inside the provider plugins on first use.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pi_core.llm.retry import RetryPolicy
    from pi_core.providers import ApiProvider, StreamOptions
    from pi_core.types import AssistantMessage, AssistantMessageEvent, Context, Model


async def stream_simple(provider: ApiProvider, model: Model, context: Context, options: StreamOptions | None = None,
                        retry: RetryPolicy | None = None) -> AsyncIterator[AssistantMessageEvent]:
    from pi_core.llm.stream import error_event, safe_stream
    from pi_core.models.env_keys import env_api_key
    from pi_core.models.thinking import clamp_thinking_level
    from pi_core.providers import StreamOptions
    from pi_core.types import AssistantMessage

    options = options or StreamOptions()
    if provider.api != model.api:
        message = AssistantMessage(api=model.api, provider=model.provider, model=model.id)
        yield error_event(message, f"Mismatched api: {model.api} expected {provider.api}", False)
        return
    changes: dict[str, object] = {}
    if options.reasoning:
        level = clamp_thinking_level(model, options.reasoning)
        changes["reasoning"] = None if level == "off" else level
    if not options.api_key:
        key = env_api_key(model.provider)
        if key:
            changes["api_key"] = key
    if changes:
        options = dataclasses.replace(options, **changes)  # type: ignore[arg-type]
    if retry is not None:
        from pi_core.llm.retry import stream_with_retry

        events = stream_with_retry(provider, model, context, options, retry)
    else:
        events = safe_stream(provider, model, context, options)
    async for event in events:
        yield event


async def complete(provider: ApiProvider, model: Model, context: Context, options: StreamOptions | None = None,
                   retry: RetryPolicy | None = None) -> AssistantMessage:
    """Stream to the end and return the final message (``stop_reason`` error/aborted on failure)."""
    final: AssistantMessage | None = None
    async for event in stream_simple(provider, model, context, options, retry):
        if event.type in ("done", "error"):
            final = event.final
    assert final is not None, "stream_simple always ends with a terminal event"
    return final
