"""Stream a slice of lines out of a text file with read's limits, without loading the whole file.

Lines are split on "\\n" only (a file ending in "\\n" has an empty last line), line sizes are UTF-8
bytes, and the kept lines obey ``truncate_head``'s rules, so notices and counts match Pi's exactly.
Counting the lines after the slice is bounded by ``COUNT_SCAN_LIMIT`` bytes of reading in total;
past that the line total is reported as a lower bound (Pi would have loaded the whole file).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import BinaryIO

from pi_core.toolkit.truncate import DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES

CHUNK_SIZE = 1 << 16
COUNT_SCAN_LIMIT = 64 * 1024 * 1024


class OffsetBeyondEnd(Exception):
    def __init__(self, total_lines: int) -> None:
        super().__init__(total_lines)
        self.total_lines = total_lines


@dataclass
class TextSlice:
    kept: list[str] = field(default_factory=list)
    output_bytes: int = 0
    truncated_by: str | None = None  # "lines" | "bytes" | None: why fewer than the selected lines were kept
    first_line_exceeds: bool = False
    first_line_bytes: int = 0
    selected_lines: int = 0  # lines in [start, start+limit) that exist
    selected_bytes: int = 0  # UTF-8 size of the selection joined with "\n"
    total_lines: int = 0  # lines in the whole file (a lower bound when not counted_all)
    counted_all: bool = True
    invalid_utf8: bool = False


class _Scanner:
    """Reads a binary stream line by line; keeps only what the caller asks for."""

    def __init__(self, stream: BinaryIO, head: bytes = b"") -> None:
        self.stream = stream
        self.buf = head
        self.pos = 0
        self.eof = False
        self.bytes_read = len(head)
        self.finished = False  # the last line (the one without "\n") has been consumed

    def _fill(self) -> bool:
        if self.eof:
            return False
        chunk = self.stream.read(CHUNK_SIZE)
        if not chunk:
            self.eof = True
            return False
        self.bytes_read += len(chunk)
        self.buf = self.buf[self.pos :] + chunk
        self.pos = 0
        return True

    def next_line(self, keep: int) -> tuple[bytes, int] | None:
        """The next line's first ``keep`` bytes and its full length, or None after the last line."""
        if self.finished:
            return None
        parts: list[bytes] = []
        kept = length = 0
        while True:
            newline = self.buf.find(b"\n", self.pos)
            end = len(self.buf) if newline < 0 else newline
            piece_len = end - self.pos
            if kept < keep:
                piece = self.buf[self.pos : min(end, self.pos + keep - kept)]
                parts.append(piece)
                kept += len(piece)
            length += piece_len
            if newline >= 0:
                self.pos = newline + 1
                return b"".join(parts), length
            self.buf, self.pos = b"", 0
            if not self._fill():
                self.finished = True
                return b"".join(parts), length

    def skip(self, lines: int | None, budget: int | None = None) -> tuple[int, int, bool]:
        """Consume up to ``lines`` whole lines (all with None); at EOF the last line too.

        Returns (lines consumed, their UTF-8 content bytes without newlines, stopped by ``budget``), where
        ``budget`` caps the total bytes read from the stream.
        """
        count = content = 0
        while not self.finished:
            if lines is not None and count >= lines:
                return count, content, False
            want = None if lines is None else lines - count
            available = self.buf.count(b"\n", self.pos)
            if want is not None and available >= want:
                for _ in range(want):
                    newline = self.buf.find(b"\n", self.pos)
                    content += newline - self.pos
                    self.pos = newline + 1
                return count + want, content, False
            count += available
            content += len(self.buf) - self.pos - available
            self.buf, self.pos = b"", 0
            if budget is not None and self.bytes_read >= budget:
                return count, content, True
            if not self._fill():
                self.finished = True
                return count + 1, content, False
        return count, content, False


def _decode(raw: bytes, result: TextSlice) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        result.invalid_utf8 = True
        return raw.decode("utf-8", "replace")


def read_slice(stream: BinaryIO, head: bytes, start: int, limit: int | None,
               max_lines: int = DEFAULT_MAX_LINES, max_bytes: int = DEFAULT_MAX_BYTES) -> TextSlice:
    """Lines ``[start, start+limit)`` (0-based) of the stream, cut like ``truncate_head``.

    ``head`` holds bytes already read from the front of ``stream``. Raises OffsetBeyondEnd.
    """
    scanner = _Scanner(stream, head)
    if start:
        skipped, _, _ = scanner.skip(start)
        # At EOF skip() also consumes the final line, so a finished scanner has no line ``start``.
        if scanner.finished:
            raise OffsetBeyondEnd(skipped)
    result = TextSlice()
    content_bytes = 0
    more_may_follow = False  # collection stopped with selected lines possibly left over
    while limit is None or result.selected_lines < limit:
        line = scanner.next_line(max_bytes + 1)
        if line is None:
            break
        raw, length = line
        result.selected_lines += 1
        if length > max_bytes:  # only its first bytes were kept, and it cannot fit anyway
            if result.selected_lines == 1:
                result.first_line_exceeds, result.first_line_bytes = True, length
            result.truncated_by = "bytes"
            content_bytes += length
            more_may_follow = True
            break
        text = _decode(raw, result)
        size = len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
        content_bytes += size
        cost = size + (1 if result.kept else 0)
        if result.output_bytes + cost > max_bytes:
            result.truncated_by = "bytes"
            more_may_follow = True
            break
        result.kept.append(text)
        result.output_bytes += cost
        if len(result.kept) >= max_lines:
            more_may_follow = True
            break
    if more_may_follow and (limit is None or result.selected_lines < limit):
        # The rest of the selection only needs counting; skip() does that a chunk at a time.
        more = None if limit is None else limit - result.selected_lines
        lines, size, stopped = scanner.skip(more, COUNT_SCAN_LIMIT)
        result.selected_lines += lines
        content_bytes += size
        result.counted_all = not stopped
        if result.truncated_by is None and (lines or stopped):
            result.truncated_by = "lines"
    result.selected_bytes = content_bytes + max(0, result.selected_lines - 1)
    after = 0
    if result.counted_all:
        after, _, stopped = scanner.skip(None, COUNT_SCAN_LIMIT)
        result.counted_all = not stopped
    result.total_lines = start + result.selected_lines + after
    return result
