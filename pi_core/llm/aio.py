"""httpx2's transport for provider requests: HTTP/1.1 over plain asyncio sockets, with a small pool.

httpx2's own transport runs on httpcore2, which imports anyio (and sniffio, truststore, platform) at
import and runs its pool's locks through anyio's asyncio backend at the first request; with h11 below it,
~60 ms of a ``pi -p`` run went to that stack before any byte was sent, for a process that makes a few
requests on one kept-alive connection. This transport does what that stack did for pi's requests with
what asyncio has: an ``asyncio.Protocol`` and a buffer per socket, ``loop.create_connection`` (happy
eyeballs 0.25 s, as anyio), ``loop.start_tls``, ``asyncio.timeout``; ``pi_core.llm.http11`` frames the
requests and parses the responses by h11's rules, so they parse and fail the same way (``Server
disconnected without sending a response.``, h11's texts).

Its failures are httpx2's exceptions (``ConnectError``, ``ReadTimeout`` ...) chained to the ``OSError`` /
``ssl.SSLError`` behind them, with httpcore2's messages, so ``Connection error.: …``, ``Request timed out.``,
``Connection lost: …`` and CERTIFICATE_VERIFY_FAILED read as before. httpcore2's pool rules are kept:
HTTP/1.1 only, at most 100 connections (a request past them waits, up to the pool timeout), 20 idle ones
kept for 5 s, an idle connection the server closed is never reused. Beyond httpcore2: a request on a
kept-alive connection the server closed as it went out (no byte of an answer came back) is sent once more on
a new connection instead of failing. Proxied requests keep httpx2's own transport (the client builds those
from the environment).
"""

from __future__ import annotations

import asyncio
import select
import ssl
import time
from collections.abc import AsyncIterator, Callable

import httpx2

from pi_core.llm import http11

READ_BUFFER_LIMIT = 256 * 1024  # unread bytes held per connection before the socket stops being read
READ_NUM_BYTES = 64 * 1024  # one read hands the parser at most this much (httpcore2's size)
MAX_CONNECTIONS = 100
MAX_IDLE_CONNECTIONS = 20
KEEPALIVE_EXPIRY_S = 5.0
DEFAULT_PORTS = {b"http": 80, b"https": 443, b"ws": 80, b"wss": 443}

Origin = tuple[bytes, bytes, int]  # scheme, host, port


class _Socket(asyncio.Protocol):
    """The receiving end of one connection: bytes queue up in ``buffer`` until a reader ``take``s them; past
    ``READ_BUFFER_LIMIT`` the transport pauses reading (a slow consumer never buffers a whole body)."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None  # the TLS transport once start_tls succeeded
        self.buffer = bytearray()
        self.eof = False
        self.error: BaseException | None = None
        self._reader: asyncio.Future[None] | None = None
        self._drained: asyncio.Future[None] | None = None
        self._paused = False
        self._reading_paused = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        if len(self.buffer) >= READ_BUFFER_LIMIT and not self._reading_paused and self.transport is not None:
            self._reading_paused = True
            self.transport.pause_reading()
        self._wake()

    def take(self, max_bytes: int) -> bytes:
        data = bytes(self.buffer[:max_bytes])
        del self.buffer[:max_bytes]
        if self._reading_paused and len(self.buffer) < READ_BUFFER_LIMIT and self.transport is not None:
            self._reading_paused = False
            self.transport.resume_reading()
        return data

    def eof_received(self) -> bool:
        self.eof = True
        self._wake()
        return False  # close the transport: nothing is ever written after the peer's EOF

    def connection_lost(self, exc: Exception | None) -> None:
        self.eof = True
        self.error = exc
        self._wake()
        if self._drained is not None and not self._drained.done():
            self._drained.set_exception(exc or ConnectionResetError("connection lost"))

    def pause_writing(self) -> None:
        self._paused = True

    def resume_writing(self) -> None:
        self._paused = False
        if self._drained is not None and not self._drained.done():
            self._drained.set_result(None)

    def _wake(self) -> None:
        if self._reader is not None and not self._reader.done():
            self._reader.set_result(None)

    async def readable(self) -> None:
        if self.buffer or self.eof:
            return
        self._reader = asyncio.get_running_loop().create_future()
        try:
            await self._reader
        finally:
            self._reader = None

    async def drain(self) -> None:
        if self._paused:
            self._drained = asyncio.get_running_loop().create_future()
            try:
                await self._drained
            finally:
                self._drained = None


class _Connection:
    """One HTTP/1.1 connection over one socket, one request at a time (``pi_core.llm.http11`` frames it)."""

    def __init__(self, origin: Origin, transport: asyncio.Transport, protocol: _Socket) -> None:
        self.origin = origin
        self.transport = transport
        self.protocol = protocol
        self.expires_at = 0.0
        self.reader = http11.ResponseReader(b"GET", keep_alive=False)
        self.sent_all = False
        self.answered = False

    async def send(self, request: httpx2.Request, timeouts: dict[str, float | None]) -> None:
        """Write ``request``, head and body (the head and a one-piece body in one write)."""
        method = request.method.encode("ascii")
        head, length, keep_alive = http11.request_head(method, request.url.raw_path, request.headers.raw)
        self.reader = http11.ResponseReader(method, keep_alive)
        self.sent_all = False
        timeout = timeouts.get("write")
        stream = request.stream
        assert isinstance(stream, httpx2.AsyncByteStream)  # httpx2's AsyncClient sends only those
        pending: bytes | None = head
        sent = 0
        try:
            async for data in stream:
                if length is None:
                    data = http11.chunk(data)
                else:
                    sent += len(data)
                    if sent > length:
                        raise httpx2.LocalProtocolError("Too much data for declared Content-Length")
                if pending is not None:
                    data, pending = pending + data, None
                if data:
                    await self.write(data, timeout)
            if length is not None and sent < length:
                raise httpx2.LocalProtocolError("Too little data for declared Content-Length")
            tail = http11.LAST_CHUNK if length is None else b""
            if pending is not None:
                tail = pending + tail
            if tail:
                await self.write(tail, timeout)
        except httpx2.WriteError:
            return  # a server may answer (an error) before it read the whole request: read that answer
        self.sent_all = True

    async def exchange(self, request: httpx2.Request, timeouts: dict[str, float | None]) -> http11.Head:
        """Send ``request`` and read the final response's status line and headers (interim 1xx answers
        skipped); ``answered`` says whether any byte of an answer arrived."""
        self.answered = False
        await self.send(request, timeouts)
        timeout = timeouts.get("read")
        reader = self.reader
        while True:
            head = reader.head()
            if head is not None:
                return head
            data = await self.read(timeout)
            if data:
                self.answered = True
            reader.feed(data)

    async def body(self, timeout: float | None) -> AsyncIterator[bytes]:
        reader = self.reader
        while True:
            data = reader.body()
            if data is None:
                reader.feed(await self.read(timeout))
            elif data:
                yield data
            else:
                return

    async def read(self, timeout: float | None) -> bytes:
        protocol = self.protocol
        if not protocol.buffer and not protocol.eof:
            try:
                async with asyncio.timeout(timeout):
                    await protocol.readable()
            except TimeoutError as err:
                raise httpx2.ReadTimeout(str(err)) from err
        if protocol.buffer:
            return protocol.take(READ_NUM_BYTES)
        if protocol.error is not None:
            raise httpx2.ReadError(str(protocol.error)) from protocol.error
        return b""

    async def write(self, data: bytes, timeout: float | None) -> None:
        protocol = self.protocol
        if protocol.error is not None or self.transport.is_closing():
            error = protocol.error or ConnectionResetError("connection closed")
            raise httpx2.WriteError(str(error)) from error
        self.transport.write(data)
        if protocol._paused:
            try:
                async with asyncio.timeout(timeout):
                    await protocol.drain()
            except TimeoutError as err:
                raise httpx2.WriteTimeout(str(err)) from err
            except OSError as err:
                raise httpx2.WriteError(str(err)) from err

    def reusable(self) -> bool:
        """Both sides finished the exchange and neither asked to close: the next request may follow."""
        return self.sent_all and self.reader.reusable

    def stale(self, now: float) -> bool:
        """An idle connection past its keep-alive, or with something to read: the server closed it."""
        protocol = self.protocol
        if now > self.expires_at or protocol.buffer or protocol.eof or self.transport.is_closing():
            return True
        sock = self.transport.get_extra_info("socket")
        fd = sock.fileno() if sock is not None else -1
        if fd < 0:
            return True
        poll = select.poll()
        poll.register(fd, select.POLLIN)
        return bool(poll.poll(0))

    def close(self) -> None:
        self.transport.close()


class AsyncioTransport(httpx2.AsyncBaseTransport):
    """An ``httpx2`` transport: HTTP/1.1 connections per origin, kept alive between requests. https requests
    use ``tls()``'s context, asked for at the first one: plain http (a local model server) never builds one."""

    def __init__(self, tls: Callable[[], ssl.SSLContext]) -> None:
        self._tls = tls
        self._context: ssl.SSLContext | None = None
        self._idle: dict[Origin, list[_Connection]] = {}
        self._open: set[_Connection] = set()
        self._slots: asyncio.Semaphore | None = None

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        url = request.url
        scheme = url.raw_scheme
        port = url.port or DEFAULT_PORTS.get(scheme)
        if port is None:
            if not scheme:
                raise httpx2.UnsupportedProtocol("Request URL is missing an 'http://' or 'https://' protocol.")
            raise httpx2.UnsupportedProtocol(f"Request URL has an unsupported protocol '{scheme.decode()}://'.")
        timeouts: dict[str, float | None] = request.extensions.get("timeout", {})
        slots = self._slots
        if slots is None:
            slots = self._slots = asyncio.Semaphore(MAX_CONNECTIONS)
        if slots.locked():
            try:
                async with asyncio.timeout(timeouts.get("pool")):
                    await slots.acquire()
            except TimeoutError as err:
                raise httpx2.PoolTimeout(str(err)) from err
        else:
            await slots.acquire()
        origin = (scheme, url.raw_host, port)
        connection = None
        try:
            connection = self._idle_connection(origin)
            if connection is None:
                connection = await self._connect(origin, request, timeouts.get("connect"))
                head = await connection.exchange(request, timeouts)
            else:
                try:
                    head = await connection.exchange(request, timeouts)
                except (httpx2.RemoteProtocolError, httpx2.ReadError):
                    # The server closed this kept-alive connection as the request went out (its idle timeout
                    # and our request crossed): nothing was answered, so the request goes once more on a new
                    # connection, as a browser does. A body that cannot be replayed is not resent.
                    if connection.answered or not isinstance(request.stream, httpx2.ByteStream):
                        raise
                    self._discard(connection)
                    connection = None
                    connection = await self._connect(origin, request, timeouts.get("connect"))
                    head = await connection.exchange(request, timeouts)
        except BaseException:
            if connection is not None:
                self._discard(connection)
            slots.release()
            raise
        return httpx2.Response(status_code=head.status, headers=head.headers,
                               stream=_ResponseStream(self, connection, timeouts.get("read")),
                               extensions={"http_version": head.http_version, "reason_phrase": head.reason})

    def _idle_connection(self, origin: Origin) -> _Connection | None:
        idle = self._idle.get(origin)
        if not idle:
            return None
        now = time.monotonic()
        while idle:
            connection = idle.pop()
            if not connection.stale(now):
                return connection
            self._discard(connection)
        return None

    async def _connect(self, origin: Origin, request: httpx2.Request, timeout: float | None) -> _Connection:
        scheme, raw_host, port = origin
        host = raw_host.decode("ascii")
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(timeout):
                transport, protocol = await loop.create_connection(_Socket, host, port, happy_eyeballs_delay=0.25)
        except TimeoutError as err:
            raise httpx2.ConnectTimeout(str(err)) from err
        except OSError as err:
            raise httpx2.ConnectError(str(err)) from err
        if scheme in (b"https", b"wss"):
            server_hostname = request.extensions.get("sni_hostname") or host
            try:
                async with asyncio.timeout(timeout):
                    secure = await loop.start_tls(transport, protocol, self._ssl_context(),
                                                  server_hostname=server_hostname)
            except TimeoutError as err:
                transport.close()
                raise httpx2.ConnectTimeout(str(err)) from err
            except (OSError, ssl.SSLError) as err:  # ssl.SSLError is an OSError; named for the reader
                transport.close()
                raise httpx2.ConnectError(str(err)) from err
            except BaseException:
                transport.close()
                raise
            if secure is None:  # the peer closed during the handshake
                raise httpx2.ConnectError("connection closed during the TLS handshake")
            assert isinstance(secure, asyncio.Transport)
            transport = protocol.transport = secure
        connection = _Connection(origin, transport, protocol)
        self._open.add(connection)
        return connection

    def _ssl_context(self) -> ssl.SSLContext:
        context = self._context
        if context is None:
            context = self._context = self._tls()
            context.set_alpn_protocols(["http/1.1"])
        return context

    def _release(self, connection: _Connection, reusable: bool) -> None:
        """A response is closed: its connection goes back to the idle ones, or is closed."""
        assert self._slots is not None
        self._slots.release()
        if not reusable or connection.transport.is_closing():
            self._discard(connection)
            return
        connection.expires_at = time.monotonic() + KEEPALIVE_EXPIRY_S
        idle = self._idle.setdefault(connection.origin, [])
        idle.append(connection)
        if sum(len(connections) for connections in self._idle.values()) > MAX_IDLE_CONNECTIONS:
            self._discard(min((c for cs in self._idle.values() for c in cs), key=lambda c: c.expires_at))

    def _discard(self, connection: _Connection) -> None:
        idle = self._idle.get(connection.origin)
        if idle and connection in idle:
            idle.remove(connection)
        self._open.discard(connection)
        connection.close()

    async def aclose(self) -> None:
        for connection in list(self._open):
            self._discard(connection)


class _ResponseStream(httpx2.AsyncByteStream):
    """A response body read from its connection; closing it hands the connection back to the pool."""

    def __init__(self, pool: AsyncioTransport, connection: _Connection, timeout: float | None) -> None:
        self._pool = pool
        self._connection = connection
        self._timeout = timeout
        self._closed = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        connection = self._connection
        timeout = self._timeout
        try:
            async for data in connection.body(timeout):
                yield data
        except BaseException:
            await self.aclose()
            raise

    async def aclose(self) -> None:
        if not self._closed:
            self._closed = True
            self._pool._release(self._connection, self._connection.reusable())
