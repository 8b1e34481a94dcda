"""What pi adds to the SDK's transports: the stderr tail of a stdio server (kept for diagnosis), notice of the
moment a server's output ends, and an HTTP client that closes with its transport."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections import deque
from collections.abc import Callable
from typing import Any, Self

import anyio
import httpx2
from mcp import StdioServerParameters
from mcp.client.stdio import stdio_client

STDERR_TAIL_CHARS = 2000


class StderrTail:
    """Keeps the last characters a stdio server wrote to stderr, read from a pipe by a background task."""

    def __init__(self) -> None:
        self.read_fd, self.write_fd = os.pipe()
        self.chunks: deque[str] = deque()
        self.size = 0
        self.task: asyncio.Task[None] | None = None

    def errlog(self) -> Any:
        """The file the server's stderr goes to; our own copy of the write end closes, so the pipe ends with it."""
        handle = os.fdopen(os.dup(self.write_fd), "w")
        os.close(self.write_fd)
        self.write_fd = -1
        return handle

    def start(self) -> None:
        self.task = asyncio.get_running_loop().create_task(self._pump())

    async def _pump(self) -> None:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader()
        transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader),
                                                    os.fdopen(self.read_fd, "rb", buffering=0))
        try:
            while chunk := await reader.read(4096):
                text = chunk.decode("utf-8", errors="replace")
                self.chunks.append(text)
                self.size += len(text)
                while self.size - len(self.chunks[0]) > STDERR_TAIL_CHARS:
                    self.size -= len(self.chunks.popleft())
        finally:
            transport.close()

    def tail(self) -> str:
        return "".join(self.chunks)[-STDERR_TAIL_CHARS:].strip()

    def close(self) -> None:
        if self.write_fd >= 0:
            os.close(self.write_fd)
            self.write_fd = -1
        if self.task is not None:
            self.task.cancel()
        else:
            os.close(self.read_fd)


class WatchedReadStream:
    """The transport's read stream, reporting when it ends (the server exited or closed its output)."""

    def __init__(self, inner: Any, on_end: Callable[[], None]) -> None:
        self._inner, self._on_end = inner, on_end

    async def receive(self) -> Any:
        try:
            return await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._on_end()
            raise

    def __aiter__(self) -> WatchedReadStream:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            raise StopAsyncIteration from None

    async def __aenter__(self) -> Self:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> bool | None:
        return await self._inner.__aexit__(*exc)  # type: ignore[no-any-return]

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


@contextlib.asynccontextmanager
async def watched(transport: Any, on_end: Callable[[], None]) -> Any:
    async with transport as (read_stream, write_stream):
        yield WatchedReadStream(read_stream, on_end), write_stream


@contextlib.asynccontextmanager
async def stdio_with_errlog(params: StdioServerParameters, errlog: Any) -> Any:
    try:
        async with stdio_client(params, errlog=errlog) as streams:
            yield streams
    finally:
        if errlog is not sys.stderr:
            errlog.close()


@contextlib.asynccontextmanager
async def with_http_client(client: httpx2.AsyncClient, transport: Any) -> Any:
    async with client, transport as streams:
        yield streams
