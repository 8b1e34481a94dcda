"""The ACP wire on stdin/stdout: newline-delimited JSON-RPC messages, with an answer for every malformed line.

The SDK's own stdio transport drops a line that is not JSON without a word and stops serving on valid JSON that
is not a JSON-RPC object; here a parse error and an invalid request are answered as JSON-RPC 2.0 says
(-32700, -32600) and the server keeps reading. Stdin is read by a plain daemon thread (a pipe, a file or a
terminal alike); stdout is the private copy of fd 1 the mode claimed, written under a lock.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading
from typing import Any, BinaryIO

READ_SIZE = 65536
PARSE_ERROR = -32700
INVALID_REQUEST = -32600


class StdioTransport:
    """A message transport for ``acp`` connections (the SDK's ``Transport`` protocol)."""

    def __init__(self, stdin_fd: int, stdout: BinaryIO) -> None:
        self._out = stdout
        self._lock = threading.Lock()
        self._broken = False
        self._buffer = b""
        self._eof = False
        self._chunks: asyncio.Queue[bytes] = asyncio.Queue()
        loop = asyncio.get_running_loop()

        def pump() -> None:
            while True:
                try:
                    chunk = os.read(stdin_fd, READ_SIZE)
                except OSError as err:
                    sys.stderr.write(f"pi: reading stdin failed: {err}\n")
                    chunk = b""
                loop.call_soon_threadsafe(self._chunks.put_nowait, chunk)
                if not chunk:
                    return

        # A daemon thread, not the executor: the loop's shutdown would wait for a read that may never return.
        threading.Thread(target=pump, name="pi-acp-stdin", daemon=True).start()

    async def send(self, message: dict[str, Any]) -> None:
        # default=str: the SDK's invalid-params answer carries pydantic's error details, which may hold objects
        line = (json.dumps(message, ensure_ascii=False, separators=(",", ":"), default=str) + "\n").encode("utf-8",
                                                                                            "surrogatepass")
        with self._lock:
            if self._broken:
                raise ConnectionError("the client closed stdout")
            try:
                self._out.write(line)
                self._out.flush()
            except (BrokenPipeError, ValueError) as err:  # ValueError: the file object is closed
                self._broken = True
                raise ConnectionError("the client closed stdout") from err

    async def receive(self) -> dict[str, Any] | None:
        while True:
            line = await self._next_line()
            if line is None:
                return None
            message = await self._checked(line)
            if message is not None:
                return message

    async def close(self) -> None:
        with self._lock:
            self._broken = True

    async def _next_line(self) -> bytes | None:
        while True:
            newline = self._buffer.find(b"\n")
            if newline >= 0:
                line, self._buffer = self._buffer[:newline], self._buffer[newline + 1:]
                if line.strip():
                    return line
                continue
            if self._eof:
                line, self._buffer = self._buffer, b""
                return line if line.strip() else None
            chunk = await self._chunks.get()
            if chunk:
                self._buffer += chunk
            else:
                self._eof = True

    async def _checked(self, line: bytes) -> dict[str, Any] | None:
        """The message, or None after answering a line that is not a JSON-RPC message."""
        try:
            message = json.loads(line.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as err:
            await self._reject(None, PARSE_ERROR, "Parse error", f"not a JSON message: {err}")
            return None
        if not isinstance(message, dict):
            await self._reject(None, INVALID_REQUEST, "Invalid request",
                               f"expected a JSON-RPC object, got a JSON {type(message).__name__}")
            return None
        request_id = message.get("id")
        if "id" in message and (isinstance(request_id, bool) or not isinstance(request_id, (str, int, type(None)))):
            await self._reject(None, INVALID_REQUEST, "Invalid request", "id must be a string, a number or null")
            return None
        method = message.get("method")
        if "method" in message and not isinstance(method, str):
            await self._reject(request_id, INVALID_REQUEST, "Invalid request", "method must be a string")
            return None
        if method is None and not ("id" in message and ("result" in message or "error" in message)):
            await self._reject(request_id, INVALID_REQUEST, "Invalid request",
                               "neither a request (method) nor a response (id with result or error)")
            return None
        params = message.get("params")
        if params is not None and not isinstance(params, (dict, list)):
            await self._reject(request_id, INVALID_REQUEST, "Invalid request", "params must be an object")
            return None
        return message

    async def _reject(self, request_id: Any, code: int, text: str, details: str) -> None:
        try:
            await self.send({"jsonrpc": "2.0", "id": request_id,
                             "error": {"code": code, "message": text, "data": {"details": details}}})
        except ConnectionError:
            pass
