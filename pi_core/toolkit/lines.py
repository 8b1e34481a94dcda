"""Split a byte stream into lines on LF only (one trailing CR stripped), decoding UTF-8 incrementally.

``str.splitlines`` and httpx's ``aiter_lines`` also split on U+2028/U+2029 and other separators that
may legally appear inside JSON strings; protocols framed by LF (RPC JSONL, SSE) must not.
"""

from __future__ import annotations

import codecs


class JsonlSplitter:
    """Turns a byte stream into records: ``feed(chunk)`` returns complete ones, ``finish()`` the tail."""

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._buffer: list[str] = []

    def feed(self, chunk: bytes) -> list[str]:
        return self._split(self._decoder.decode(chunk))

    def finish(self) -> list[str]:
        """Records left at end of input: the last line, even without a trailing LF."""
        records = self._split(self._decoder.decode(b"", final=True))
        tail = "".join(self._buffer)
        self._buffer.clear()
        if tail:
            records.append(_strip_cr(tail))
        return records

    def _split(self, text: str) -> list[str]:
        if not text:
            return []
        parts = text.split("\n")
        if len(parts) == 1:
            self._buffer.append(text)
            return []
        first = "".join(self._buffer) + parts[0]
        self._buffer = [parts[-1]] if parts[-1] else []
        return [_strip_cr(first), *(_strip_cr(p) for p in parts[1:-1])]


def _strip_cr(record: str) -> str:
    return record.removesuffix("\r")
