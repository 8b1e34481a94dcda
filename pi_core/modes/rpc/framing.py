"""Strict JSONL framing for RPC mode: records split on LF only, written as compact JSON plus LF.

Python's ``str.splitlines`` would also split on U+2028/U+2029, ``\\r`` and other separators that may
legally appear inside a JSON string, so the reader splits on ``"\\n"`` explicitly and decodes UTF-8
incrementally so a multi-byte character cut across two reads survives.
"""

from __future__ import annotations

from typing import Any

from pi_core.sessions.jsonfmt import js_dumps
from pi_core.toolkit.lines import JsonlSplitter

__all__ = ["JsonlSplitter", "serialize_json_line", "split_records"]


def serialize_json_line(value: Any) -> str:  # open: any JSON value
    """``JSON.stringify(value) + "\\n"``: U+2028/U+2029 stay raw, numbers print the JavaScript way."""
    return js_dumps(value) + "\n"


def split_records(data: bytes, chunk_size: int | None = None) -> list[str]:
    """All records of ``data`` (optionally fed in ``chunk_size`` pieces, to exercise the boundaries)."""
    splitter = JsonlSplitter()
    records: list[str] = []
    step = chunk_size or max(len(data), 1)
    for start in range(0, len(data), step):
        records.extend(splitter.feed(data[start : start + step]))
    records.extend(splitter.finish())
    return records
