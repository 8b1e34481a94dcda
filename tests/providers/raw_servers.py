"""Test servers on 127.0.0.1 that write raw bytes, for what a provider server can do to a connection that the
fake model server does not script (a reply cut in its status line, a compressed stream written by hand)."""

from __future__ import annotations

import asyncio
from typing import Self

OK = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-Mixed-Case: Yes\r\n\r\nhello"


class RawServer:
    """A server on 127.0.0.1 whose ``_answer`` writes raw bytes; counts connections, ends kept-alive ones on exit."""

    path = "/v1/x"

    def __init__(self) -> None:
        self.connections = 0
        self._handlers: set[asyncio.Task[None]] = set()

    async def __aenter__(self) -> Self:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.url = f"http://127.0.0.1:{self.server.sockets[0].getsockname()[1]}{self.path}"
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.server.close()
        for handler in self._handlers:  # kept-alive connections wait for a next request: end them here
            handler.cancel()
        await asyncio.gather(*self._handlers, return_exceptions=True)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        handler = asyncio.current_task()
        assert handler is not None
        self._handlers.add(handler)
        await self._answer(reader, writer)

    async def _answer(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        raise NotImplementedError


class CannedServer(RawServer):
    """Answers every request with ``reply`` (bytes written as they are; ``close`` ends the connection after)."""

    path = "/v1/x?a=1"

    def __init__(self, reply: bytes, *, close: bool = False, trickle: bool = False) -> None:
        super().__init__()
        self.reply = reply
        self.close = close
        self.trickle = trickle  # a few bytes per write: every parser state meets a read boundary

    async def _answer(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                               if line.lower().startswith(b"content-length:")), 0)
                await reader.readexactly(length)
                if head.lower().find(b"transfer-encoding: chunked") >= 0:
                    await reader.readuntil(b"0\r\n\r\n")
                for start in range(0, len(self.reply), 3 if self.trickle else len(self.reply) or 1):
                    writer.write(self.reply[start:start + 3] if self.trickle else self.reply)
                    await writer.drain()
                    if self.trickle:
                        await asyncio.sleep(0.002)
                if self.close:
                    break
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError):
            pass
        finally:
            writer.close()
