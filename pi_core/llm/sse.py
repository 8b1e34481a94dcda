"""Server-sent events from raw bytes: ``SSEDecoder().feed(chunk)`` returns the events completed so far.

Lines end at LF, CRLF or CR, found in the bytes before any decoding, so a multi-byte character split
between two network reads is never cut and U+2028 inside a JSON string is never taken for a line end.
Each line is decoded as UTF-8 with replacement characters: invalid bytes from a provider or a proxy
become U+FFFD instead of failing the reply. ``event``/``data`` fields are kept (``id``/``retry`` and
comments are ignored: no wire pi speaks reconnects); several ``data`` lines join with ``\\n``.
"""

from __future__ import annotations

from dataclasses import dataclass

MAX_EVENT_BYTES = 64 * 1024 * 1024  # a hostile or broken stream must not grow memory without bound


class SSEOverflow(ValueError):
    """One event grew past ``MAX_EVENT_BYTES`` without ending."""


@dataclass(slots=True)
class SSEEvent:
    """One server-sent event: its type and its data."""

    event: str  # "" when the frame named no event type
    data: str


class SSEDecoder:
    """Incremental decoder: ``feed(bytes) -> list[SSEEvent]``, then ``finish()`` at the end of the body."""

    __slots__ = ("_buffer", "_cr", "_data", "_event", "_pending", "_size", "max_event_bytes")

    def __init__(self, max_event_bytes: int = MAX_EVENT_BYTES) -> None:
        self._buffer = b""
        self._cr = False  # the previous chunk ended in CR: a LF starting this one belongs to it
        self._event = ""
        self._data: list[str] = []
        self._pending = False
        self._size = 0
        self.max_event_bytes = max_event_bytes

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        if self._cr and chunk.startswith(b"\n"):
            chunk = chunk[1:]
        self._cr = chunk.endswith(b"\r")
        if b"\r" in chunk:
            chunk = chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        if b"\n" not in chunk:
            self._buffer += chunk
            self._check(len(self._buffer))
            return []
        lines = (self._buffer + chunk).split(b"\n")
        self._buffer = lines.pop()
        self._check(len(self._buffer))
        out: list[SSEEvent] = []
        for raw in lines:
            self._line(raw, out)
        return out

    def finish(self) -> list[SSEEvent]:
        """Events still open when the body ended (a last frame without its blank line counts)."""
        out: list[SSEEvent] = []
        if self._buffer:
            raw, self._buffer = self._buffer, b""
            self._line(raw, out)
        self._line(b"", out)
        return out

    def _check(self, pending: int) -> None:
        if self._size + pending > self.max_event_bytes:
            raise SSEOverflow(f"a stream event exceeded {self.max_event_bytes // (1024 * 1024)} MiB")

    def _line(self, raw: bytes, out: list[SSEEvent]) -> None:
        if not raw:
            if self._pending:
                out.append(SSEEvent(self._event, "\n".join(self._data)))
            self._event, self._data, self._pending, self._size = "", [], False, 0
            return
        if raw.startswith(b"data:"):  # the hot path: every frame of every wire has one
            value = raw[6:] if raw.startswith(b"data: ") else raw[5:]
            self._data.append(value.decode("utf-8", "replace"))
            self._pending = True
            self._size += len(raw)
            self._check(0)
            return
        if raw.startswith(b":"):
            return
        name, _, value = raw.partition(b":")
        if name == b"event":
            self._event = (value[1:] if value.startswith(b" ") else value).decode("utf-8", "replace")
            self._pending = True
        elif name == b"data":  # "data" without a colon: an empty data line
            self._data.append("")
            self._pending = True
