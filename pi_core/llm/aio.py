"""httpx2's transport for provider requests, on httpcore2's connection pool over plain asyncio sockets.

httpcore2's own network backend for asyncio goes through anyio (a cancel scope around every read and
write, an extra stream layer). A provider turn does a few reads and writes on one kept-alive connection,
so that layer was ~10 % of a turn's CPU between a reply and the next request. ``AsyncioBackend``
implements httpcore2's public ``AsyncNetworkBackend``/``AsyncNetworkStream`` interface with what asyncio
has: ``loop.create_connection`` (an ``asyncio.Protocol`` and a buffer per socket), ``loop.start_tls``,
``asyncio.timeout``. Its errors are httpcore2's (``ConnectError``, ``ReadTimeout`` ...) chained to the
``OSError``/``ssl.SSLError`` behind them, and ``AsyncioTransport`` maps them to httpx2's as httpx2 does.
Proxied requests keep httpx2's own transport (the client builds those from the environment).
"""

from __future__ import annotations

import asyncio
import contextlib
import select
import socket
import ssl
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from typing import Any

import httpcore2
import httpx2

SocketOption = Any  # httpcore2._types.SOCKET_OPTION: (level, name, value) or (level, name, None, length)


READ_BUFFER_LIMIT = 256 * 1024  # unread bytes held per connection before the socket stops being read


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


class AsyncioStream(httpcore2.AsyncNetworkStream):
    """One TCP (or TLS) connection."""

    def __init__(self, transport: asyncio.Transport, protocol: _Socket) -> None:
        self._transport = transport
        self._protocol = protocol

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        protocol = self._protocol
        if not protocol.buffer and not protocol.eof:
            try:
                async with asyncio.timeout(timeout):
                    await protocol.readable()
            except TimeoutError as err:
                raise httpcore2.ReadTimeout(str(err)) from err
        if protocol.buffer:
            return protocol.take(max_bytes)
        if protocol.error is not None:
            raise httpcore2.ReadError(str(protocol.error)) from protocol.error
        return b""

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not buffer:
            return
        protocol = self._protocol
        if protocol.error is not None or self._transport.is_closing():
            error = protocol.error or ConnectionResetError("connection closed")
            raise httpcore2.WriteError(str(error)) from error
        self._transport.write(buffer)
        try:
            async with asyncio.timeout(timeout):
                await protocol.drain()
        except TimeoutError as err:
            raise httpcore2.WriteTimeout(str(err)) from err
        except OSError as err:
            raise httpcore2.WriteError(str(err)) from err

    async def aclose(self) -> None:
        self._transport.close()

    async def start_tls(self, ssl_context: ssl.SSLContext, server_hostname: str | None = None,
                        timeout: float | None = None) -> httpcore2.AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(timeout):
                transport = await loop.start_tls(self._transport, self._protocol, ssl_context,
                                                 server_hostname=server_hostname)
        except TimeoutError as err:
            self._transport.close()
            raise httpcore2.ConnectTimeout(str(err)) from err
        except (OSError, ssl.SSLError) as err:  # ssl.SSLError is an OSError; named for the reader
            self._transport.close()
            raise httpcore2.ConnectError(str(err)) from err
        if transport is None:  # the peer closed during the handshake
            raise httpcore2.ConnectError("connection closed during the TLS handshake")
        assert isinstance(transport, asyncio.Transport)
        self._protocol.transport = transport
        return AsyncioStream(transport, self._protocol)

    def get_extra_info(self, info: str) -> Any:
        transport = self._transport
        if info == "ssl_object":
            return transport.get_extra_info("ssl_object")
        if info == "client_addr":
            return transport.get_extra_info("sockname")
        if info == "server_addr":
            return transport.get_extra_info("peername")
        if info == "socket":
            return transport.get_extra_info("socket")
        if info == "is_readable":  # an idle kept-alive connection with something to read was closed by the server
            protocol = self._protocol
            if protocol.buffer or protocol.eof or transport.is_closing():
                return True
            return _socket_readable(transport.get_extra_info("socket"))
        return None


def _socket_readable(sock: Any) -> bool:
    fd = sock.fileno() if sock is not None else -1
    if fd < 0:
        return True
    poll = select.poll()
    poll.register(fd, select.POLLIN)
    return bool(poll.poll(0))


class AsyncioBackend(httpcore2.AsyncNetworkBackend):
    """httpcore2's ``AsyncNetworkBackend`` on asyncio's own transports."""

    async def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                          socket_options: Iterable[SocketOption] | None = None) -> httpcore2.AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        local = (local_address, 0) if local_address else None
        try:
            async with asyncio.timeout(timeout):
                transport, protocol = await loop.create_connection(_Socket, host, port, local_addr=local,
                                                                       happy_eyeballs_delay=0.25)
        except TimeoutError as err:
            raise httpcore2.ConnectTimeout(str(err)) from err
        except OSError as err:
            raise httpcore2.ConnectError(str(err)) from err
        sock = transport.get_extra_info("socket")
        for option in socket_options or ():
            sock.setsockopt(*option)
        return AsyncioStream(transport, protocol)

    async def connect_unix_socket(self, path: str, timeout: float | None = None,
                                  socket_options: Iterable[SocketOption] | None = None) -> httpcore2.AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(timeout):
                transport, protocol = await loop.create_unix_connection(_Socket, path)
        except TimeoutError as err:
            raise httpcore2.ConnectTimeout(str(err)) from err
        except OSError as err:
            raise httpcore2.ConnectError(str(err)) from err
        sock: socket.socket = transport.get_extra_info("socket")
        for option in socket_options or ():
            sock.setsockopt(*option)
        return AsyncioStream(transport, protocol)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


class AsyncioTransport(httpx2.AsyncBaseTransport):
    """An ``httpx2`` transport: httpcore2's ``AsyncConnectionPool`` on ``AsyncioBackend`` (HTTP/1.1 and
    httpx2's default limits, as ``httpx2.AsyncHTTPTransport``). https requests get a pool of their own,
    made at the first one with ``tls()``'s context: plain http (a local model server) never builds one."""

    def __init__(self, tls: Callable[[], ssl.SSLContext]) -> None:
        self._tls = tls
        self._pools: dict[bool, httpcore2.AsyncConnectionPool] = {}

    def _pool(self, secure: bool) -> httpcore2.AsyncConnectionPool:
        pool = self._pools.get(secure)
        if pool is None:
            pool = self._pools[secure] = httpcore2.AsyncConnectionPool(
                ssl_context=self._tls() if secure else None, max_connections=100, max_keepalive_connections=20,
                keepalive_expiry=5.0, network_backend=AsyncioBackend())
        return pool

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        url = request.url
        scheme = url.raw_scheme
        core_request = httpcore2.Request(
            method=request.method,
            url=httpcore2.URL(scheme=scheme, host=url.raw_host, port=url.port, target=url.raw_path),
            headers=request.headers.raw, content=request.stream, extensions=request.extensions)
        with _mapped():
            response = await self._pool(scheme != b"http").handle_async_request(core_request)
        return httpx2.Response(status_code=response.status, headers=response.headers,
                               stream=_ResponseStream(response.stream), extensions=response.extensions)

    async def aclose(self) -> None:
        for pool in self._pools.values():
            await pool.aclose()


class _ResponseStream(httpx2.AsyncByteStream):
    def __init__(self, stream: Any) -> None:
        self._stream = stream

    async def __aiter__(self) -> AsyncIterator[bytes]:
        with _mapped():
            async for part in self._stream:
                yield part

    async def aclose(self) -> None:
        with _mapped():
            await self._stream.aclose()


# httpcore2's exceptions -> httpx2's, most specific first (a ConnectTimeout is also a TimeoutException).
_ERRORS: tuple[tuple[type[Exception], type[httpx2.HTTPError]], ...] = (
    (httpcore2.ConnectTimeout, httpx2.ConnectTimeout), (httpcore2.ReadTimeout, httpx2.ReadTimeout),
    (httpcore2.WriteTimeout, httpx2.WriteTimeout), (httpcore2.PoolTimeout, httpx2.PoolTimeout),
    (httpcore2.TimeoutException, httpx2.TimeoutException), (httpcore2.ConnectError, httpx2.ConnectError),
    (httpcore2.ReadError, httpx2.ReadError), (httpcore2.WriteError, httpx2.WriteError),
    (httpcore2.NetworkError, httpx2.NetworkError), (httpcore2.ProxyError, httpx2.ProxyError),
    (httpcore2.UnsupportedProtocol, httpx2.UnsupportedProtocol),
    (httpcore2.LocalProtocolError, httpx2.LocalProtocolError),
    (httpcore2.RemoteProtocolError, httpx2.RemoteProtocolError), (httpcore2.ProtocolError, httpx2.ProtocolError))


@contextlib.contextmanager
def _mapped() -> Iterator[None]:
    try:
        yield
    except Exception as err:
        for source, target in _ERRORS:
            if isinstance(err, source):
                raise target(str(err)) from err
        raise
