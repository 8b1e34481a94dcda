"""The one HTTP transport of pi's provider wires: a JSON request out, server-sent events back, on httpx2.

A wire plugin builds a ``WireRequest`` (provider name, URL, headers, JSON body) and streams it::

    stream = await open_sse(WireRequest(model.provider, url, headers, body), options)
    try:
        async for sse in stream:          # SSEEvent(event, data), data already UTF-8 decoded
            ...
    finally:
        await stream.aclose()

What it does for every wire, the way the vendor SDKs did (their defaults, their texts):
- one ``httpx2.AsyncClient`` per event loop, shared by every request (keep-alive between turns), or
  ``options.http_client`` when one is injected (tests: ``httpx2.MockTransport``; never closed here);
  proxies from ``HTTP(S)_PROXY``/``ALL_PROXY``/``NO_PROXY``, CA bundles from ``SSL_CERT_FILE``,
  ``SSL_CERT_DIR``, ``REQUESTS_CA_BUNDLE`` and ``NODE_EXTRA_CA_CERTS`` (``pi_core.llm.tls``); redirects
  followed as fetch follows them (307/308 keep the POST and its body);
- timeouts: ``options.timeout_s`` (default 600 s) per network read/write, 5 s to connect, and an idle
  timeout (``options.idle_timeout_s``, default 300 s, ``None``/0 = off) on *progress*: from sending
  the request to the first event, and between two complete events, so a stream that trickles a byte
  at a time without finishing an event still ends;
- retries before any event was read (``options.max_retries``, default 2, 0 when pi's own retry layer
  drives): 408/409/429/5xx and dropped or refused connections, backoff 0.5 s × 2^n (max 8 s, jitter),
  ``retry-after-ms``/``retry-after`` honoured up to 60 s, ``x-should-retry: true|false`` obeyed;
  a refused connection to a loopback address is never retried (nothing is listening: fail fast);
- ``options.signal`` aborts at once, whether connecting, waiting for headers, sleeping before a
  retry or reading: ``StreamAborted`` is raised.

The client and its proxy/CA environment are ``pi_core.llm.http_client``; the request and failure types
``pi_core.llm.wire``. Failures raise ``WireError`` (a ``ProviderError``: message, status, retry_after, retryable,
permanent). Its message is the SDKs' wording (``429 {…}`` via the wire's ``status_text``,
``Connection error.``, ``Request timed out.``, ``Connection lost``) followed by ``origin_suffix``:
`` [provider NAME, POST URL]``, so every provider error says where it went. ``MessageBuilder.error``
turns a WireError into the terminal event with the right ``FailureInfo``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
from collections.abc import AsyncGenerator, AsyncIterator, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from pi_core.llm.http_client import DEFAULT_TIMEOUT_S, connect_failure, shared_client
from pi_core.llm.incremental import SharedItems
from pi_core.llm.request_build import HeaderValueError, build_request
from pi_core.llm.sse import SSEDecoder, SSEEvent, SSEOverflow
from pi_core.llm.wire import (  # noqa: F401 - WireError, WireRequest and origin_suffix are imported from here
    StatusText,
    StreamAborted,
    WireError,
    WireRequest,
    default_status_text,
    failure_detail,
    origin_suffix,
    status_failure,
)
from pi_core.providers import resolved

if TYPE_CHECKING:
    import httpx2

    from pi_core.providers import StreamOptions
    from pi_core.types import Model

DEFAULT_IDLE_TIMEOUT_S = 300.0
DEFAULT_MAX_RETRIES = 2
MAX_RETRY_AFTER_S = 60.0
# After a wire's last event, how long the rest of the body (normally just the chunked terminator) may take to
# arrive so the connection can serve the next turn; past it, the connection is closed instead.
RELEASE_DRAIN_S = 0.25
RELEASE_DRAIN_BYTES = 1024 * 1024




# --- one request --------------------------------------------------------------------------------------


class _Guard:
    """Interrupts the one await the transport is in (abort, idle timeout) by cancelling its task.

    The transport's awaits run in the consumer's task; a callback that fires while the task waits
    elsewhere only sets a flag that the next ``wait`` sees, so nothing outside the transport is ever
    cancelled. ``Task.uncancel`` takes the cancel back once it has been turned into our exception.
    """

    def __init__(self, options: StreamOptions) -> None:
        self.options = options
        self.signal = options.signal
        self.loop = asyncio.get_running_loop()
        self.task = asyncio.current_task()
        self.waiting = False
        self.reason: str | None = None
        idle = options.idle_timeout_s if options.idle_timeout_s is not None else DEFAULT_IDLE_TIMEOUT_S
        self.idle = idle if idle and idle > 0 else None
        self.last_progress = self.loop.time()
        self._timer: asyncio.TimerHandle | None = None
        self._remove = self.signal.add_callback(self._on_abort)
        if self.idle is not None:
            self._timer = self.loop.call_later(self.idle, self._check_idle)

    def _on_abort(self) -> None:  # any thread: the signal may fire from a worker or a signal handler
        self.loop.call_soon_threadsafe(self._interrupt, "abort")

    def progress(self) -> None:
        self.last_progress = self.loop.time()

    def _check_idle(self) -> None:
        assert self.idle is not None
        left = self.last_progress + self.idle - self.loop.time()
        if left > 0:
            self._timer = self.loop.call_later(left, self._check_idle)
            return
        self._timer = None
        self._interrupt("idle")

    def _interrupt(self, reason: str) -> None:
        if self.reason is None:
            self.reason = reason
        if self.waiting and self.task is not None and not self.task.done():
            self.task.cancel()

    def check(self) -> None:
        if self.signal.aborted:
            raise StreamAborted()
        if self.reason == "idle":
            raise _IdleTimeout()

    async def wait(self, awaitable: Any) -> Any:
        try:
            self.check()
        except BaseException:
            if asyncio.iscoroutine(awaitable):
                awaitable.close()  # never started: not "never awaited"
            raise
        self.waiting = True
        try:
            return await awaitable
        except asyncio.CancelledError:
            if self.reason is None or self.task is None:
                raise
            self.task.uncancel()
            if self.signal.aborted or self.reason == "abort":
                raise StreamAborted() from None
            raise _IdleTimeout() from None
        finally:
            self.waiting = False

    async def sleep(self, delay: float) -> None:
        if delay > 0:
            paused = self._timer
            if paused is not None:  # a retry's back-off is not the server being idle
                paused.cancel()
            try:
                await self.wait(asyncio.sleep(delay))
            finally:
                self.progress()
                if paused is not None and self.idle is not None:
                    self._timer = self.loop.call_later(self.idle, self._check_idle)

    def close(self) -> None:
        self._remove()
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None


class _IdleTimeout(Exception):
    pass


# The same waits for a wire on another transport (the Codex WebSocket, plugins/openai_codex_responses).
RequestGuard = _Guard
IdleTimeout = _IdleTimeout


class SSEStream:
    """An open response: ``status``, ``headers``, ``info()`` for ``on_response``; iterate for events."""

    def __init__(self, response: httpx2.Response, request: WireRequest, guard: _Guard,
                 observed: Model | None = None) -> None:
        self.response = response
        self.request = request
        self._guard = guard
        self._observed = observed  # the model whose raw events plugins watch (on_stream_event)
        self.status = response.status_code
        self.headers = response.headers
        self._chunks: AsyncIterator[bytes] | None = None
        self._events: AsyncGenerator[SSEEvent, None] | None = None
        self._reuse = False

    def info(self) -> dict[str, Any]:  # open: transport info, JSON
        return {"status": self.status, "headers": dict(self.headers)}

    def __aiter__(self) -> AsyncIterator[SSEEvent]:
        self._events = events = self._decoded()
        return events

    async def _decoded(self) -> AsyncGenerator[SSEEvent, None]:
        guard = self._guard
        decoder = SSEDecoder()
        chunks = self._chunks = self.response.aiter_bytes().__aiter__()
        with self._read_failures():
            while (chunk := await self._next_chunk(chunks)) is not None:
                events = decoder.feed(chunk)
                if events:
                    guard.progress()
                    for event in events:
                        if self._observed is not None:
                            await self._observe(event)
                        yield event
                        guard.check()
            for event in decoder.finish():
                yield event

    async def raw(self) -> AsyncIterator[bytes]:
        """The body's bytes as they arrive, for a wire whose stream is not SSE (AWS event-stream), with the
        same abort, timeout and connection-loss handling; call ``progress()`` for every complete message so
        the idle timeout measures messages, not bytes."""
        chunks = self._chunks = self.response.aiter_bytes().__aiter__()
        with self._read_failures():
            while (chunk := await self._next_chunk(chunks)) is not None:
                yield chunk
                self._guard.check()

    async def _next_chunk(self, chunks: AsyncIterator[bytes]) -> bytes | None:
        """The body's next chunk, awaited under the guard (abort, idle timeout); None at its end."""
        try:
            chunk: bytes = await self._guard.wait(chunks.__anext__())
        except StopAsyncIteration:
            return None
        return chunk

    @contextlib.contextmanager
    def _read_failures(self) -> Iterator[None]:
        """What fails while the body is read, as the WireError the retry layers judge: an idle timeout, an
        event too large, a timeout, a lost connection or an undecodable body, each naming the request."""
        import httpx2

        try:
            yield
        except _IdleTimeout:
            raise WireError(f"Request timed out: no complete event for {self._guard.idle:g} s"
                            f"{self.request.origin()}", retryable=True) from None
        except SSEOverflow as err:
            raise WireError(f"{err}{self.request.origin()}") from None
        except httpx2.TimeoutException as err:
            raise WireError(f"Request timed out.{self.request.origin()}", retryable=True) from err
        except httpx2.TransportError as err:
            raise WireError(f"Connection lost: {failure_detail(err)}{self.request.origin()}", retryable=True) from err
        except httpx2.DecodingError as err:
            raise WireError(f"{_undecodable(self.headers, err)}{self.request.origin()}", retryable=True) from err

    def progress(self) -> None:
        """A complete message arrived (``raw`` readers): the idle timeout starts again."""
        self._guard.progress()

    async def _observe(self, event: SSEEvent) -> None:
        try:
            data: Any = json.loads(event.data)
        except ValueError:
            data = event.data
        callback = self._guard.options.on_stream_event
        if callback is not None and self._observed is not None:
            await resolved(callback(data, self._observed))

    def release(self) -> None:
        """The wire has every event it needs (it may stop reading at its end marker, such as ``[DONE]``):
        ``aclose`` then reads what is left of the body, so the kept-alive connection serves the next turn
        instead of a new connection (and TLS handshake) per request."""
        self._reuse = True

    async def aclose(self) -> None:
        import httpx2

        try:
            if self._events is not None:  # a wire that stops at its end marker leaves it suspended: the
                await self._events.aclose()  # loop would close it later, from a task of its own
            if self._reuse and not self.response.is_closed and not self._guard.signal.aborted:
                await self._drain()
            # Closing a connection that already broke must not hide the error that broke it.
            with contextlib.suppress(httpx2.TransportError):
                await self.response.aclose()
        finally:
            self._guard.close()

    async def _drain(self) -> None:
        import httpx2

        chunks = self._chunks if self._chunks is not None else self.response.aiter_bytes().__aiter__()
        left = RELEASE_DRAIN_BYTES
        try:
            async with asyncio.timeout(RELEASE_DRAIN_S):
                while left > 0:
                    left -= len(await chunks.__anext__())
        except (StopAsyncIteration, TimeoutError, httpx2.TransportError):
            pass  # all read (the connection is reusable), or not worth waiting for: closed below


async def open_sse(request: WireRequest, options: StreamOptions, status_text: StatusText = default_status_text,
                   model: Model | None = None) -> SSEStream:
    """Send ``request`` and return the open event stream of a 2xx answer; raise WireError/StreamAborted.

    With ``model`` given, the plugin hooks on the wire run here for every wire: ``options.on_headers`` once
    before sending (retries reuse its headers), ``options.on_response`` for each response (errors too), and
    ``options.on_stream_event`` for each decoded event of the stream."""
    import httpx2

    guard = _Guard(options)
    try:
        client = options.http_client if options.http_client is not None else shared_client()
        content = request.body if isinstance(request.body, bytes) else _dumps(request.body)
        headers = {"content-type": request.content_type, "accept": "text/event-stream", **request.headers}
        if options.on_headers is not None and model is not None:
            editable: dict[str, str | None] = dict(headers)
            await resolved(options.on_headers(editable, model))
            headers = {k: v for k, v in editable.items() if v is not None}
        timeout = options.timeout_s if options.timeout_s is not None else DEFAULT_TIMEOUT_S
        retries = options.max_retries if options.max_retries is not None else DEFAULT_MAX_RETRIES
        attempt = 0
        resent = False
        while True:
            try:
                http_request = build_request(client, options.http_client is None, request.method, request.url,
                                              content, headers, timeout)
            except HeaderValueError as err:
                raise WireError(f"{err}{request.origin()}", permanent=True) from None
            connection = _ConnectionTrace()
            http_request.extensions["trace"] = connection.trace
            try:
                response = await guard.wait(client.send(http_request, stream=True))
            except (StreamAborted, _IdleTimeout):
                raise
            except httpx2.TransportError as err:
                if not resent and connection.stale(err):
                    resent = True  # the server's idle timeout crossed our request: not a failure of the server
                    continue
                failure = connect_failure(err, request)
                if failure.retryable and attempt < retries:
                    attempt += 1
                    await guard.sleep(_backoff(attempt, None))
                    continue
                raise failure from err
            if options.on_response is not None and model is not None:
                await resolved(options.on_response({"status": response.status_code,
                                                    "headers": dict(response.headers)}, model))
            if response.status_code < 300:
                guard.progress()
                return SSEStream(response, request, guard, model if options.on_stream_event else None)
            try:
                raw = await guard.wait(response.aread())
            except httpx2.TransportError:
                raw = b""
            except httpx2.DecodingError:  # not "(no body)": that reads as a context overflow
                raw = f"({response.headers.get('content-encoding', '')} body could not be decoded)".encode()
            finally:
                await response.aclose()
            failure = status_failure(response.status_code, raw.decode("utf-8", "replace").strip(), response.headers,
                                     request, status_text)
            if failure.retryable and attempt < retries:
                attempt += 1
                await guard.sleep(_backoff(attempt, failure.retry_after))
                continue
            raise failure
    except _IdleTimeout:
        guard.close()
        raise WireError(f"Request timed out: no response for {guard.idle:g} s{request.origin()}",
                        retryable=True) from None
    except BaseException:
        guard.close()
        raise


class _ConnectionTrace:
    """Follows one request through httpcore2's ``trace`` extension: whether it went out on a kept-alive
    connection rather than one opened for it."""

    def __init__(self) -> None:
        self.opened = False
        self.sent = False

    async def trace(self, name: str, info: dict[str, Any]) -> None:
        if name.startswith("connection.connect_"):
            self.opened = True
        elif name.endswith("send_request_headers.started"):
            self.sent = True

    def stale(self, err: Exception) -> bool:
        """A kept-alive connection the server closed as the request went out: no answer came back (a FIN,
        or a reset), so the request is sent once more on a new connection. httpcore2 skips only an idle
        connection already seen closed; one closing while the request is written fails it."""
        import httpx2

        if not self.sent or self.opened:
            return False
        return isinstance(err, (httpx2.ReadError, httpx2.WriteError)) or (
            isinstance(err, httpx2.RemoteProtocolError) and str(err) == _UNANSWERED)


_UNANSWERED = "Server disconnected without sending a response."  # httpcore2's text, of an EOF before any answer


def _undecodable(headers: Mapping[str, str], err: Exception) -> str:
    """A body its ``Content-Encoding`` does not describe (a server or proxy that says gzip and sends plain)."""
    return f"Malformed response: its {headers.get('content-encoding', '')} body could not be decoded ({err})"


def _backoff(attempt: int, retry_after: float | None) -> float:
    """The SDKs' rule: the server's delay when it gave one (0-60 s), else 0.5 s × 2^(n−1), max 8 s, −25% jitter."""
    if retry_after is not None and 0 < retry_after <= MAX_RETRY_AFTER_S:
        return retry_after
    base: float = min(0.5 * 2.0 ** (attempt - 1), 8.0)
    return base * (1 - 0.25 * random.random())


_ENCODE = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode


def _dumps(body: Any) -> bytes:
    """Compact UTF-8 JSON, as the SDKs send it; NaN/Infinity are refused (ValueError), lone surrogates
    become U+FFFD rather than failing the request. The history's shared items (``SharedItems``) are encoded
    once per conversation: the same text ``json.dumps`` gives, without re-encoding the history every turn."""
    if type(body) is dict and any(type(value) is SharedItems for value in body.values()) and \
            all(type(key) is str for key in body):
        text = "{" + ",".join(f"{_ENCODE(key)}:{_items_json(value) if type(value) is SharedItems else _ENCODE(value)}"
                              for key, value in body.items()) + "}"
    else:
        text = _ENCODE(body)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace").encode("utf-8")


def _items_json(items: SharedItems) -> str:
    start, end, store = items.start, items.end, items.json
    known, shared = store.texts, items[start:end]
    kept = 0  # the kept texts that are still of the very items at their place
    for (item, _text), current in zip(known, shared):
        if item is not current:
            break
        kept += 1
    texts = [text for _item, text in known[:kept]] + [_ENCODE(item) for item in shared[kept:]]
    if kept == len(known) < len(shared) and len(store.texts) == kept:  # this conversation grew: keep the rest
        store.texts = known + tuple(zip(shared[kept:], texts[kept:]))
    own = [_ENCODE(item) for item in items[:start]], [_ENCODE(item) for item in items[end:]]
    return "[" + ",".join([*own[0], *texts, *own[1]]) + "]"
