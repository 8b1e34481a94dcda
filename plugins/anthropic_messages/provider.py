"""The ``anthropic-messages`` ApiProvider: stream a request through the official async SDK as pi events."""

from __future__ import annotations

import asyncio
import functools
import json
import ssl
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any

from pi_plugins.anthropic_messages.events import (
    EventFailure,
    EventReader,
    in_band_error_retryable,
    parse_event_data,
)
from pi_plugins.anthropic_messages.payload import (
    build_headers,
    build_params,
    is_oauth_token,
)

from pi_core.llm.retry import retry_after_from_headers
from pi_core.llm.stream import UNKNOWN_ERROR_TEXT, FailureInfo, MessageBuilder
from pi_core.models.env_keys import env_api_key
from pi_core.providers import StreamOptions
from pi_core.types import AssistantMessageEvent, Context, Model

if TYPE_CHECKING:
    import anthropic

DEFAULT_BASE_URL = "https://api.anthropic.com"
DEFAULT_TIMEOUT_S = 600.0
DEFAULT_MAX_RETRIES = 2
Emit = Callable[[AssistantMessageEvent], None]
Send = Callable[[AssistantMessageEvent], Awaitable[None]]


@functools.cache
def _ssl_context() -> ssl.SSLContext:
    """``ssl.create_default_context()``, one per process, shared by the per-event-loop clients; the CA
    bundle (~47 ms) loads on the first TLS connection (never for a plain-http local server)."""
    from pi_core.llm.tls import default_context

    return default_context()


class AnthropicMessagesProvider:
    """Anthropic Messages over SSE. SDK clients are created lazily, one per event loop and credentials."""

    api = "anthropic-messages"

    def __init__(self) -> None:
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple[Any, ...], anthropic.AsyncAnthropic]] = (
            weakref.WeakKeyDictionary())

    # -- public --

    async def stream(self, model: Model, context: Context, options: StreamOptions) -> AsyncIterator[AssistantMessageEvent]:
        """Run the request in a task so an abort can cancel a read that is waiting on the network.

        The task hands over one event at a time and waits until the consumer comes back for the next:
        ``partial`` is one mutable message, so running ahead would show a consumer later state than
        the event it is handling.
        """
        builder = MessageBuilder(model)
        queue: asyncio.Queue[AssistantMessageEvent | None] = asyncio.Queue()

        async def send(event: AssistantMessageEvent) -> None:
            queue.put_nowait(event)
            await queue.join()

        loop = asyncio.get_running_loop()
        task = asyncio.ensure_future(self._run(builder, model, context, options, send, queue.put_nowait))
        task.add_done_callback(lambda _: queue.put_nowait(None))
        remove = options.signal.add_callback(lambda: loop.call_soon_threadsafe(task.cancel))
        finished = False
        try:
            while True:
                event = await queue.get()
                if event is None:
                    break
                finished = event.type in ("done", "error")
                yield event
                queue.task_done()
            if not finished:  # cancelled before the request even started
                yield builder.error(None, aborted=True)
        finally:
            remove()
            if not task.done():
                task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                pass

    # -- internals --

    def client(self, model: Model, api_key: str, oauth: bool, http_client: Any) -> anthropic.AsyncAnthropic:
        import anthropic

        base_url = model.base_url or DEFAULT_BASE_URL
        credentials = {"auth_token": api_key, "api_key": None} if oauth else {"api_key": api_key}
        if http_client is not None:  # injected (tests); never cached, the caller owns it
            return anthropic.AsyncAnthropic(base_url=base_url, timeout=DEFAULT_TIMEOUT_S,
                                            max_retries=DEFAULT_MAX_RETRIES, http_client=http_client, **credentials)
        # httpx2 connection pools belong to the event loop that created them: one set of clients per loop.
        clients = self._clients.setdefault(asyncio.get_running_loop(), {})
        key = (base_url, api_key, oauth)
        client = clients.get(key)
        if client is None:
            http = anthropic.DefaultAsyncHttpxClient(verify=_ssl_context())
            client = anthropic.AsyncAnthropic(base_url=base_url, timeout=DEFAULT_TIMEOUT_S,
                                              max_retries=DEFAULT_MAX_RETRIES, http_client=http, **credentials)
            clients[key] = client
        return client

    async def _run(self, builder: MessageBuilder, model: Model, context: Context, options: StreamOptions,
                   send: Send, emit: Emit) -> None:
        """``send`` waits for the consumer; ``emit`` (for the terminal event after a cancel) does not."""
        try:
            await self._request(builder, model, context, options, send)
        except asyncio.CancelledError:
            if not options.signal.aborted:
                raise
            emit(builder.error(None, aborted=True))
        except EventFailure as exc:
            emit(builder.error(exc, aborted=options.signal.aborted, info=exc.info))
        except Exception as exc:  # noqa: BLE001 - the provider contract: every failure is one error event
            message, info = describe_error(exc)
            emit(builder.error(message, aborted=options.signal.aborted, info=info))

    async def _request(self, builder: MessageBuilder, model: Model, context: Context, options: StreamOptions,
                       send: Send) -> None:
        import anthropic

        api_key = options.api_key or env_api_key(model.provider)
        if not api_key:
            raise EventFailure(f"No API key for provider: {model.provider}", FailureInfo(retryable=False))
        oauth = is_oauth_token(api_key)
        params = build_params(model, context, options, oauth)
        if options.on_payload is not None:
            replaced = options.on_payload(params, model)
            if replaced is not None:
                params = replaced
        client = self.client(model, api_key, oauth, options.http_client)
        request_options: dict[str, Any] = {"headers": build_headers(model, context, options, oauth)}
        if options.timeout_s is not None:
            request_options["timeout"] = options.timeout_s
        if options.max_retries is not None:
            request_options["max_retries"] = options.max_retries
        stream = await client.post("/v1/messages", body=params, cast_to=anthropic.types.Message,
                                   options=request_options, stream=True,
                                   stream_cls=anthropic.AsyncStream[anthropic.types.RawMessageStreamEvent])
        if options.on_response is not None:
            options.on_response({"status": stream.response.status_code, "headers": dict(stream.response.headers)},
                                model)
        await send(builder.start())
        reader = EventReader(builder, context.tools, oauth)
        # Read the SSE frames ourselves (as Pi 0.73.1 does): an in-band ``error`` event keeps its raw
        # text, and event JSON that a proxy mangled gets the same repair as tool arguments.
        try:
            async for sse in anthropic.AsyncStream.raw_events(stream.response):
                if sse.event == "error":
                    raise EventFailure(sse.data, FailureInfo(retryable=in_band_error_retryable(sse.data)))
                if sse.event == "ping" or not sse.data:
                    continue
                for pi_event in reader.handle(parse_event_data(sse.data)):
                    await send(pi_event)
        finally:
            await stream.response.aclose()
        if options.signal.aborted:
            await send(builder.error(None, aborted=True))
            return
        if not reader.saw_message_stop:
            raise EventFailure("Anthropic stream ended before message_stop", FailureInfo(retryable=True))
        reason = reader.stop_reason
        if reason in ("error", "aborted"):
            raise EventFailure(UNKNOWN_ERROR_TEXT, FailureInfo(retryable=False))
        await send(builder.done(reason))


def describe_error(exc: Exception) -> tuple[str, FailureInfo | None]:
    """Pi's error text for an SDK/transport failure, plus what the retry layer needs to know."""
    import anthropic
    import httpx2

    if isinstance(exc, anthropic.APIStatusError):
        status, body = exc.status_code, exc.body
        if isinstance(body, (dict, list)):
            text = f"{status} {json.dumps(body)}"
        elif body:
            text = f"{status} {body}"
        else:
            text = f"{status} status code (no body)"
        headers = exc.response.headers
        should_retry = headers.get("x-should-retry")
        retryable = {"true": True, "false": False}.get(should_retry or "")
        return text, FailureInfo(status=status, retry_after=retry_after_from_headers(headers), retryable=retryable)
    if isinstance(exc, anthropic.APITimeoutError):
        return "Request timed out.", FailureInfo(retryable=True)
    if isinstance(exc, anthropic.APIConnectionError):
        cause = exc.__cause__
        return (f"Connection error: {cause}" if cause else "Connection error."), FailureInfo(retryable=True)
    if isinstance(exc, httpx2.TimeoutException):
        return f"Request timed out: {str(exc) or type(exc).__name__}", FailureInfo(retryable=True)
    if isinstance(exc, httpx2.TransportError):
        return f"Connection lost: {str(exc) or type(exc).__name__}", FailureInfo(retryable=True)
    return str(exc) or type(exc).__name__, None
