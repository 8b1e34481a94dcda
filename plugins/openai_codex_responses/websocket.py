"""The Codex backend's WebSocket transport: one socket per session and ChatGPT account, kept between turns.

``streaming`` uses it when the ``transport`` setting is ``auto`` (the default), ``websocket`` or
``websocket-cached``. The socket is ``wss://…/codex/responses`` (the SSE URL with a WebSocket scheme),
opened with the Codex headers and ``OpenAI-Beta: responses_websockets=2026-02-06``. Each request is one text
message, ``{"type": "response.create", …the Responses body}``; each answer event is one text message (the
same JSON the SSE stream carries in its ``data:`` lines), ending with ``response.done``/``.completed``.

Cached context (``auto``, ``websocket-cached``): the backend remembers the responses given on a socket, so a
request whose body equals the previous one except for the input, and whose input starts with that input
plus the previous answer's items, goes as ``previous_response_id`` and only the new items.

The backend ends a socket after 60 minutes, even mid-answer: a cached socket older than ``max_age_s``
(45 minutes) is replaced before a request, and one idle for ``idle_s`` (5 minutes) is closed. The session's
end closes its sockets (``close_session``), so ``pi -p`` exits at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pi_core.errors import ProviderError
from pi_core.llm.transport import IdleTimeout, RequestGuard

if TYPE_CHECKING:
    from websockets.asyncio.client import ClientConnection

OPENAI_BETA = "responses_websockets=2026-02-06"
DEFAULT_CONNECT_TIMEOUT_S = 15.0
CLOSE_TIMEOUT_S = 1.0  # a polite close waits this long for the server's close frame
MESSAGE_TOO_BIG = 1009
_FINAL = ("response.done", "response.completed", "response.incomplete")


class WebSocketFailure(ProviderError):
    """The socket failed (connect, upgrade, close, idle): before any event, the request goes over SSE."""

    def __init__(self, message: str) -> None:
        super().__init__(message, retryable=None)


class WebSocketProtocolError(ProviderError):
    """A message that is not JSON: the backend's fault, not the transport's (no SSE fallback)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, retryable=None)


def websocket_url(url: str) -> str:
    if url.startswith("https://"):
        return "wss://" + url.removeprefix("https://")
    if url.startswith("http://"):
        return "ws://" + url.removeprefix("http://")
    return url


async def connect(url: str, headers: dict[str, str], timeout_s: float | None) -> ClientConnection:
    """Open a socket; every failure is a ``WebSocketFailure`` naming what went wrong."""
    try:
        from websockets.asyncio.client import connect as open_socket
        from websockets.exceptions import InvalidHandshake, InvalidStatus, InvalidURI
    except ImportError:
        raise WebSocketFailure("WebSocket transport is not available: the websockets package is missing") from None
    timeout = DEFAULT_CONNECT_TIMEOUT_S if timeout_s is None else timeout_s
    secure = url.startswith("wss://")
    try:
        return await open_socket(url, additional_headers=headers, user_agent_header=None, compression=None,
                                 open_timeout=timeout or None, ping_interval=None, close_timeout=CLOSE_TIMEOUT_S,
                                 max_size=None, proxy=_proxy(url), ssl=_tls() if secure else None)
    except TimeoutError:
        raise WebSocketFailure(f"WebSocket connect timeout after {round(timeout * 1000)}ms") from None
    except InvalidStatus as err:
        raise WebSocketFailure(f"WebSocket upgrade refused: HTTP {err.response.status_code}") from None
    except (InvalidHandshake, InvalidURI) as err:
        raise WebSocketFailure(f"WebSocket error: {err}") from None
    except OSError as err:
        raise WebSocketFailure(f"WebSocket error: {err.strerror or err}") from None


def _proxy(url: str) -> str | None:
    from pi_core.llm.http_client import _proxy_for

    return _proxy_for(url.replace("wss://", "https://", 1).replace("ws://", "http://", 1))


def _tls() -> Any:
    from pi_core.llm.tls import provider_context

    return provider_context()


def closed_text(err: Exception) -> str:
    """Pi's wording: ``WebSocket closed 1006``, ``WebSocket closed 1011 <reason>``."""
    received = getattr(err, "rcvd", None)
    code = received.code if received is not None else 1006
    reason = received.reason if received is not None and received.reason else ""
    if not reason and code == MESSAGE_TOO_BIG:
        reason = "message too big"
    return f"WebSocket closed {code} {reason}".strip()


async def send(connection: ClientConnection, guard: RequestGuard, message: dict[str, Any]) -> None:
    from websockets.exceptions import ConnectionClosed

    try:
        await guard.wait(connection.send(json.dumps(message)))
    except ConnectionClosed as err:
        raise WebSocketFailure(closed_text(err)) from None


def as_failure(err: Exception, guard: RequestGuard | None = None) -> WebSocketFailure:
    if isinstance(err, WebSocketFailure):
        return err
    idle = guard.idle if guard is not None else None
    return WebSocketFailure(f"WebSocket idle timeout after {round((idle or 0) * 1000)}ms")


async def events(connection: ClientConnection, guard: RequestGuard) -> AsyncIterator[dict[str, Any]]:
    """The answer's events, each message parsed, until the final one; abort and idle timeout via ``guard``."""
    from websockets.exceptions import ConnectionClosed

    while True:
        try:
            message = await guard.wait(connection.recv())
        except ConnectionClosed as err:
            raise WebSocketFailure(closed_text(err)) from None
        except IdleTimeout:
            raise WebSocketFailure(f"WebSocket idle timeout after {round((guard.idle or 0) * 1000)}ms") from None
        guard.progress()
        text = message.decode("utf-8", "replace") if isinstance(message, bytes) else message
        try:
            event = json.loads(text)
        except ValueError as err:
            raise WebSocketProtocolError(f"Invalid Codex WebSocket JSON: {err}") from None
        if not isinstance(event, dict):
            continue
        yield event
        if event.get("type") in _FINAL:
            return


# --- cached sockets and their context --------------------------------------------------------------


@dataclass
class Continuation:
    """What the socket's last answer leaves the backend knowing."""

    body: dict[str, Any]  # the full request body it answered
    response_id: str
    items: list[dict[str, Any]]  # the answer as input items (tool outputs excluded)


@dataclass
class CachedSocket:
    connection: ClientConnection
    loop: asyncio.AbstractEventLoop
    created: float = field(default_factory=time.monotonic)
    busy: bool = False
    continuation: Continuation | None = None
    idle_timer: asyncio.TimerHandle | None = None

    def reusable(self) -> bool:
        from websockets.protocol import State

        return self.connection.state is State.OPEN and self.loop is asyncio.get_running_loop()


def _without_input(body: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in body.items() if k not in ("input", "previous_response_id")}


def continued_body(entry: CachedSocket | None, body: dict[str, Any]) -> dict[str, Any]:
    """``body`` as only its new items after the socket's last answer, or whole (the context is then forgotten)."""
    continuation = entry.continuation if entry is not None else None
    if entry is None or continuation is None:
        return body
    items: list[Any] = body.get("input") or []
    known = [*(continuation.body.get("input") or []), *continuation.items]
    if _without_input(body) != _without_input(continuation.body) or items[:len(known)] != known:
        entry.continuation = None
        return body
    return {**body, "previous_response_id": continuation.response_id, "input": items[len(known):]}


class Lease:
    """A socket for one request; ``release`` keeps a cached one for the next request or closes it."""

    def __init__(self, pool: SocketPool, connection: ClientConnection, entry: CachedSocket | None,
                 key: tuple[str, str] | None) -> None:
        self.pool, self.connection, self.entry, self.key = pool, connection, entry, key
        self.keep = False
        self.released = False

    async def release(self) -> None:
        if self.released:
            return
        self.released = True
        entry = self.entry
        if self.keep and entry is not None and self.key is not None and entry.reusable():
            entry.busy = False
            self.pool.schedule_idle_close(self.key, entry)
            return
        if entry is not None:
            entry.continuation = None
            if self.key is not None and self.pool.entries.get(self.key) is entry:
                del self.pool.entries[self.key]
        await close(self.connection)


async def close(connection: ClientConnection) -> None:
    with contextlib.suppress(Exception):
        await connection.close()


class SocketPool:
    """The process's cached sockets by (session id, account id); ``max_age_s``/``idle_s`` are attributes so
    a test can shrink them (never sleep an hour)."""

    max_age_s = 45 * 60.0
    idle_s = 5 * 60.0

    def __init__(self) -> None:
        self.entries: dict[tuple[str, str], CachedSocket] = {}
        self.sse_sessions: set[str] = set()  # sessions whose socket failed: SSE from then on
        self._closing: set[asyncio.Task[None]] = set()

    def fallback_active(self, session: str | None) -> bool:
        return session is not None and session in self.sse_sessions

    def record_failure(self, session: str | None) -> None:
        if session is not None:
            self.sse_sessions.add(session)

    async def lease(self, url: str, headers: dict[str, str], session: str | None, account: str,
                    timeout_s: float | None) -> Lease:
        if session is None:
            return Lease(self, await connect(url, headers, timeout_s), None, None)
        key = (session, account)
        cached = self.entries.get(key)
        if cached is not None:
            if cached.idle_timer is not None:
                cached.idle_timer.cancel()
                cached.idle_timer = None
            if cached.busy:  # a concurrent request of the same session: a socket of its own, not cached
                return Lease(self, await connect(url, headers, timeout_s), None, None)
            if time.monotonic() - cached.created < self.max_age_s and cached.reusable():
                cached.busy = True
                return Lease(self, cached.connection, cached, key)
            del self.entries[key]  # too old for the backend's 60 minutes, or no longer open
            self._close_later(cached)
        entry = CachedSocket(await connect(url, headers, timeout_s), asyncio.get_running_loop(), busy=True)
        self.entries[key] = entry
        return Lease(self, entry.connection, entry, key)

    def schedule_idle_close(self, key: tuple[str, str], entry: CachedSocket) -> None:
        def expire() -> None:
            if not entry.busy and self.entries.get(key) is entry:
                del self.entries[key]
                self._close_later(entry)

        entry.idle_timer = entry.loop.call_later(self.idle_s, expire)

    def _close_later(self, entry: CachedSocket) -> None:
        if entry.idle_timer is not None:
            entry.idle_timer.cancel()
        if entry.loop.is_closed():
            return
        task = entry.loop.create_task(close(entry.connection))
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    async def close_session(self, session: str | None = None) -> None:
        """Close the sockets of ``session`` (every session when None) and forget its SSE fallback."""
        for key in [k for k in self.entries if session is None or k[0] == session]:
            entry = self.entries.pop(key)
            if entry.idle_timer is not None:
                entry.idle_timer.cancel()
            if entry.loop is asyncio.get_running_loop():
                await close(entry.connection)
        if session is None:
            self.sse_sessions.clear()
        else:
            self.sse_sessions.discard(session)
        if self._closing:
            await asyncio.gather(*[t for t in self._closing if t.get_loop() is asyncio.get_running_loop()],
                                 return_exceptions=True)


POOL = SocketPool()
