"""Strict JSONL framing for RPC mode: records split on LF only, written as compact JSON plus LF.

Python's ``str.splitlines`` would also split on U+2028/U+2029, ``\\r`` and other separators that may
legally appear inside a JSON string, so the reader splits on ``"\\n"`` explicitly and decodes UTF-8
incrementally so a multi-byte character cut across two reads survives.
"""

from __future__ import annotations

import codecs
from typing import Any

from pi_core.sessions.jsonfmt import js_dumps


def serialize_json_line(value: Any) -> str:
    """``JSON.stringify(value) + "\\n"``: U+2028/U+2029 stay raw, numbers print the JavaScript way."""
    return js_dumps(value) + "\n"


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


def split_records(data: bytes, chunk_size: int | None = None) -> list[str]:
    """All records of ``data`` (optionally fed in ``chunk_size`` pieces, to exercise the boundaries)."""
    splitter = JsonlSplitter()
    records: list[str] = []
    step = chunk_size or max(len(data), 1)
    for start in range(0, len(data), step):
        records.extend(splitter.feed(data[start : start + step]))
    records.extend(splitter.finish())
    return records
