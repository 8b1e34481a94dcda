"""The ``anthropic-messages`` ApiProvider: one Messages request over pi's SSE transport, as pi events."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

from pi_plugins._streaming import StreamAborted, StreamRun, apply_payload_hook
from pi_plugins.anthropic_messages.events import (
    EventFailure,
    EventReader,
    in_band_error_retryable,
    parse_event_data,
)
from pi_plugins.anthropic_messages.payload import (
    build_headers,
    build_params,
    header_auth,
    is_oauth_token,
    status_text,
)

from pi_core.llm.stream import UNKNOWN_ERROR_TEXT, FailureInfo, MessageBuilder
from pi_core.llm.transport import WireError, WireRequest
from pi_core.models.env_keys import env_api_key
from pi_core.providers import StreamOptions
from pi_core.types import AssistantMessageEvent, Context, Model

DEFAULT_BASE_URL = "https://api.anthropic.com"
Prepare = Callable[[dict[str, Any], dict[str, str]], None]


class AnthropicMessagesProvider:
    """Anthropic Messages over SSE: ``x-api-key`` for API keys, ``Authorization: Bearer`` for OAuth tokens."""

    api = "anthropic-messages"

    async def stream(self, model: Model, context: Context, options: StreamOptions) -> AsyncIterator[AssistantMessageEvent]:
        async for event in self.stream_request(model, context, options):
            yield event

    async def stream_request(self, model: Model, context: Context, options: StreamOptions, *, url: str | None = None,
                             prepare: Prepare | None = None) -> AsyncIterator[AssistantMessageEvent]:
        """One Messages request; ``url`` and ``prepare(params, headers)`` (called last, may change both) let a
        platform that hosts Claude elsewhere (Vertex AI) send it its own way."""
        builder = MessageBuilder(model)
        run = StreamRun(builder, options, failure=_failure_event)
        async with run:
            api_key = options.api_key or env_api_key(model.provider)
            if not api_key:
                raise EventFailure(f"No API key for provider: {model.provider}", FailureInfo(retryable=False))
            oauth = is_oauth_token(api_key) and not header_auth(model, options)
            params = build_params(model, context, options, oauth)
            headers = build_headers(model, context, options, oauth, api_key)
            if prepare is not None:
                prepare(params, headers)
            params = await apply_payload_hook(params, model, options)
            url = url or (model.base_url or DEFAULT_BASE_URL).rstrip("/") + "/v1/messages"
            request = WireRequest(model.provider, url, headers, params)
            stream = await run.open(request, status_text, model)
            yield builder.start()
            reader = EventReader(builder, context.tools, oauth)
            # Read the SSE frames ourselves (as Pi 0.73.1 does): an in-band ``error`` event keeps its raw
            # text, and event JSON that a proxy mangled gets the same repair as tool arguments.
            async for sse in stream:
                if sse.event == "error":
                    raise EventFailure(sse.data, FailureInfo(retryable=in_band_error_retryable(sse.data)))
                if sse.event == "ping" or not sse.data:
                    continue
                for pi_event in reader.handle(parse_event_data(sse.data)):
                    yield pi_event
            if options.signal.aborted:
                raise StreamAborted()
            if not reader.saw_message_stop:
                raise EventFailure("Anthropic stream ended before message_stop", FailureInfo(retryable=True))
            reason = reader.stop_reason
            if reason in ("error", "aborted"):
                raise EventFailure(UNKNOWN_ERROR_TEXT, FailureInfo(retryable=False))
            yield builder.done(reason)
        if run.failure is not None:
            yield run.failure


def _failure_event(builder: MessageBuilder, exc: Exception, options: StreamOptions) -> AssistantMessageEvent:
    """The one error event: an in-band or stream failure keeps the retryability it was given (``EventFailure``)."""
    if options.signal.aborted or isinstance(exc, StreamAborted):
        return builder.error(None, aborted=True)
    if isinstance(exc, EventFailure):
        return builder.error(exc, info=exc.info)
    if isinstance(exc, WireError):
        return builder.error(exc)
    return builder.error(str(exc) or type(exc).__name__)


_WIRE = AnthropicMessagesProvider()


def stream_messages(model: Model, context: Context, options: StreamOptions) -> AsyncIterator[AssistantMessageEvent]:
    """The ``anthropic-messages`` wire's stream (the plugin's ``LazyProvider`` target)."""
    return _WIRE.stream_request(model, context, options)
