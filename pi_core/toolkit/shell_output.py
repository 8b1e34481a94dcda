"""Bounded capture of a command's output: a decoded rolling tail, exact totals, and a spill file.

Memory stays at a few hundred KB however much a command prints: only the last 2-4 x ``max_bytes``
of decoded text is kept, and once the output outgrows the limits every raw byte goes to
``{run temp dir}/{prefix}-{16 hex}.log`` so the model can read the rest.
"""

from __future__ import annotations

import codecs
import os
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from pi_core.toolkit.tempdir import new_output_file
from pi_core.toolkit.truncate import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_LINES,
    TruncationResult,
    format_size,
    truncate_tail,
    utf8_len,
)


@dataclass
class Snapshot:
    """The tail the model sees, its truncation (with the real totals) and the spill file, if any."""

    truncation: TruncationResult
    full_output_path: str | None
    last_line_bytes: int

    @property
    def text(self) -> str:
        return self.truncation.content

    def details(self) -> dict[str, object] | None:
        """Pi's ``{truncation, fullOutputPath}`` details, or None when nothing was cut."""
        if not self.truncation.truncated:
            return None
        return {"truncation": self.truncation.to_json(), "fullOutputPath": self.full_output_path}

    def update_details(self) -> dict[str, object]:
        """Details of a progress update: the keys Pi leaves undefined are simply absent."""
        details: dict[str, object] = {}
        if self.truncation.truncated:
            details["truncation"] = self.truncation.to_json()
        if self.full_output_path is not None:
            details["fullOutputPath"] = self.full_output_path
        return details

    def formatted(self) -> str:
        """The kept text plus the notice naming the full-output file when something was cut."""
        t = self.truncation
        if not t.truncated:
            return t.content
        end = t.total_lines
        start = end - t.output_lines + 1
        if t.last_line_partial:
            notice = (f"[Showing last {format_size(t.output_bytes)} of line {end} "
                      f"(line is {format_size(self.last_line_bytes)}). Full output: {self.full_output_path}]")
        elif t.truncated_by == "lines":
            notice = f"[Showing lines {start}-{end} of {t.total_lines}. Full output: {self.full_output_path}]"
        else:
            notice = (f"[Showing lines {start}-{end} of {t.total_lines} ({format_size(t.max_bytes)} limit). "
                      f"Full output: {self.full_output_path}]")
        return f"{t.content}\n\n{notice}"


class OutputAccumulator:
    """Feed raw chunks with ``append``; ``snapshot`` any time; ``close`` once the command is done.

    Not thread-safe: callers that snapshot from another thread hold their own lock.
    """

    def __init__(self, max_lines: int = DEFAULT_MAX_LINES, max_bytes: int = DEFAULT_MAX_BYTES,
                 temp_prefix: str = "pi-bash", output_dir: Path | None = None) -> None:
        self.max_lines = max_lines
        self.max_bytes = max_bytes
        self.temp_prefix = temp_prefix
        self.output_dir = output_dir  # where the full output is kept (None: the system temp dir)
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._tail = ""
        self._tail_bytes = 0
        self._tail_mid_line = False
        self._raw_bytes = 0
        self._pending_raw: list[bytes] = []
        self.total_bytes = 0
        self.total_lines = 1
        self.last_line_bytes = 0
        self._file: BinaryIO | None = None
        self.full_output_path: str | None = None
        self._closed = False

    def append(self, chunk: bytes) -> None:
        self._raw_bytes += len(chunk)
        if self._file is not None:
            self._file.write(chunk)
        else:
            self._pending_raw.append(chunk)
        self._add_text(self._decoder.decode(chunk))
        if self._file is None and (self._raw_bytes > self.max_bytes or self.total_bytes > self.max_bytes
                                   or self.total_lines > self.max_lines):
            self._open_file()

    def close(self) -> None:
        """Flush the decoder (a dangling partial character becomes U+FFFD) and close the spill file."""
        if self._closed:
            return
        self._closed = True
        self._add_text(self._decoder.decode(b"", final=True))
        if self._file is None and (self.total_bytes > self.max_bytes or self.total_lines > self.max_lines):
            self._open_file()
        if self._file is not None:
            self._file.close()

    def snapshot(self) -> Snapshot:
        text = self._tail
        if self._tail_mid_line:
            newline = text.find("\n")
            text = "" if newline < 0 else text[newline + 1 :]
        tail = truncate_tail(text, self.max_lines, self.max_bytes)
        over = self.total_lines > self.max_lines or self.total_bytes > self.max_bytes
        truncated = tail.truncated or over
        if truncated:
            tail.truncated = True
            tail.truncated_by = tail.truncated_by or ("bytes" if self.total_bytes > self.max_bytes else "lines")
            if self._file is None and not self._closed:
                self._open_file()
        tail.total_lines = self.total_lines
        tail.total_bytes = self.total_bytes
        return Snapshot(tail, self.full_output_path, self.last_line_bytes)

    def _add_text(self, text: str) -> None:
        if not text:
            return
        size = utf8_len(text)
        self.total_bytes += size
        newlines = text.count("\n")
        self.total_lines += newlines
        if newlines:
            self.last_line_bytes = utf8_len(text[text.rfind("\n") + 1 :])
        else:
            self.last_line_bytes += size
        self._tail += text
        self._tail_bytes += size
        if self._tail_bytes > 4 * self.max_bytes:
            self._trim()

    def _trim(self) -> None:
        keep = 2 * self.max_bytes
        # Every character is at least one byte, so the last ``keep`` characters hold the last ``keep`` bytes.
        window = self._tail[-keep:]
        cut_in_window = len(window) < len(self._tail)
        data = window.encode("utf-8", "surrogatepass")
        start = max(0, len(data) - keep)
        while start < len(data) and (data[start] & 0xC0) == 0x80:
            start += 1
        before = data[start - 1] if start > 0 else (ord(self._tail[-keep - 1]) if cut_in_window else 0x0A)
        self._tail_mid_line = before != 0x0A
        self._tail = data[start:].decode("utf-8", "surrogatepass")
        self._tail_bytes = len(data) - start

    def _open_file(self) -> None:
        fd, path = new_output_file(self.temp_prefix, self.output_dir)
        self._file = os.fdopen(fd, "wb")
        for chunk in self._pending_raw:
            self._file.write(chunk)
        self._pending_raw = []
        self.full_output_path = str(path)
