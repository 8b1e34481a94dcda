"""Head/tail/line truncation shared by the built-in tools: 2000 lines or 50 KiB, whichever comes first.

Lines are split on "\\n" only and sizes are UTF-8 bytes, so the counts in notices match Pi's.
The functions never materialise a split list or a full UTF-8 copy of the input: a tool may hand
them a large string, and the work stays proportional to what is kept.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from collections.abc import Callable

DEFAULT_MAX_LINES = 2000
DEFAULT_MAX_BYTES = 51200
GREP_MAX_LINE_LENGTH = 500

_CHUNK = 1 << 20


@dataclass
class TruncationResult:
    """What a truncation kept, why it stopped, and the sizes before and after (camelCase in ``to_json``)."""

    content: str
    truncated: bool
    truncated_by: Literal["lines", "bytes"] | None
    total_lines: int
    total_bytes: int
    output_lines: int
    output_bytes: int
    last_line_partial: bool
    first_line_exceeds_limit: bool
    max_lines: int
    max_bytes: int

    def to_json(self) -> dict[str, object]:
        """The object Pi stores in ``details.truncation``."""
        return {
            "content": self.content,
            "truncated": self.truncated,
            "truncatedBy": self.truncated_by,
            "totalLines": self.total_lines,
            "totalBytes": self.total_bytes,
            "outputLines": self.output_lines,
            "outputBytes": self.output_bytes,
            "lastLinePartial": self.last_line_partial,
            "firstLineExceedsLimit": self.first_line_exceeds_limit,
            "maxLines": self.max_lines,
            "maxBytes": self.max_bytes,
        }


def utf8_len(text: str) -> int:
    """Byte length of ``text`` in UTF-8, without holding a full encoded copy of a large string."""
    if text.isascii():
        return len(text)
    if len(text) <= _CHUNK:
        return len(text.encode("utf-8", "surrogatepass"))
    return sum(
        len(text[i : i + _CHUNK].encode("utf-8", "surrogatepass")) for i in range(0, len(text), _CHUNK)
    )


def format_size(n: int) -> str:
    """``1023B``, ``50.0KB``, ``1.5MB``; ties round up, as JavaScript's ``toFixed`` does."""
    if n < 1024:
        return f"{n}B"
    if n < 1024 * 1024:
        return f"{_fixed1(n / 1024)}KB"
    return f"{_fixed1(n / (1024 * 1024))}MB"


def _fixed1(value: float) -> str:
    from decimal import ROUND_HALF_UP, Decimal

    return str(Decimal(value).quantize(Decimal("0.1"), rounding=ROUND_HALF_UP))


def _truncate(content: str, max_lines: int, max_bytes: int,
              cut: Callable[[str, int, int, int, int], TruncationResult]) -> TruncationResult:
    """``content`` whole when it is within both limits, else what ``cut`` keeps of it (called with the content,
    its total lines and bytes, and the two limits)."""
    total_bytes = utf8_len(content)
    total_lines = content.count("\n") + 1
    if total_lines <= max_lines and total_bytes <= max_bytes:
        return TruncationResult(content, False, None, total_lines, total_bytes, total_lines, total_bytes,
                                False, False, max_lines, max_bytes)
    return cut(content, total_lines, total_bytes, max_lines, max_bytes)


def truncate_head(content: str, max_lines: int = DEFAULT_MAX_LINES,
                  max_bytes: int = DEFAULT_MAX_BYTES) -> TruncationResult:
    """Keep whole lines from the top; never return a partial line."""
    return _truncate(content, max_lines, max_bytes, _cut_head)


def _cut_head(content: str, total_lines: int, total_bytes: int, max_lines: int, max_bytes: int) -> TruncationResult:
    first_end = content.find("\n")
    first_line = content if first_end < 0 else content[:first_end]
    if utf8_len(first_line) > max_bytes:
        return TruncationResult("", True, "bytes", total_lines, total_bytes, 0, 0, False, True,
                                max_lines, max_bytes)

    truncated_by: Literal["lines", "bytes"] = "lines"
    taken = used = pos = 0
    end_of_kept = 0
    while taken < max_lines:
        newline = content.find("\n", pos)
        line_end = len(content) if newline < 0 else newline
        cost = utf8_len(content[pos:line_end]) + (1 if taken else 0)
        if used + cost > max_bytes:
            truncated_by = "bytes"
            break
        used += cost
        taken += 1
        end_of_kept = line_end
        if newline < 0:
            break
        pos = newline + 1
    if taken >= max_lines and used <= max_bytes:
        truncated_by = "lines"
    return TruncationResult(content[:end_of_kept], True, truncated_by, total_lines, total_bytes, taken, used,
                            False, False, max_lines, max_bytes)


def truncate_tail(content: str, max_lines: int = DEFAULT_MAX_LINES,
                  max_bytes: int = DEFAULT_MAX_BYTES) -> TruncationResult:
    """Keep whole lines from the bottom; a single last line over the byte limit keeps its tail end."""
    return _truncate(content, max_lines, max_bytes, _cut_tail)


def _cut_tail(content: str, total_lines: int, total_bytes: int, max_lines: int, max_bytes: int) -> TruncationResult:
    if max_lines <= 0:
        return TruncationResult("", True, "lines", total_lines, total_bytes, 0, 0, False, False, max_lines, max_bytes)
    # What is kept fits in max_bytes, so in max_bytes characters: only this window needs encoding.
    window = content[-(max_bytes + 1) :] if max_bytes + 1 < len(content) else content
    data = window.encode("utf-8", "surrogatepass")
    lines = data.rsplit(b"\n", max_lines)
    last = lines[-1]
    if len(last) > max_bytes or (len(lines) == 1 and window is not content):
        kept = tail_bytes(content[content.rfind("\n") + 1 :], max_bytes)
        return TruncationResult(kept, True, "bytes", total_lines, total_bytes, 1, utf8_len(kept),
                                True, False, max_lines, max_bytes)
    # A window cut mid-line starts with a partial line; it could never fit anyway (the window alone
    # is over the limit), and rsplit's first piece beyond max_lines is excess by definition.
    candidates = lines[1:] if (len(lines) > max_lines or window is not content) else lines
    truncated_by: Literal["lines", "bytes"] = "lines"
    taken = used = 0
    for line in reversed(candidates):
        cost = len(line) + (1 if taken else 0)
        if used + cost > max_bytes:
            truncated_by = "bytes"
            break
        used += cost
        taken += 1
    if taken < len(lines) and taken < max_lines and truncated_by == "lines":
        truncated_by = "bytes"
    if taken >= max_lines and used <= max_bytes:
        truncated_by = "lines"
    kept_text = data[len(data) - used :].decode("utf-8", "surrogatepass")
    return TruncationResult(kept_text, True, truncated_by, total_lines, total_bytes, taken, used,
                            False, False, max_lines, max_bytes)


def tail_bytes(text: str, max_bytes: int) -> str:
    """The longest suffix of ``text`` whose UTF-8 encoding fits in ``max_bytes``, cut at a character boundary."""
    # Only the last max_bytes characters can matter: each is at least one byte.
    window = text[-max_bytes:] if max_bytes > 0 else ""
    data = window.encode("utf-8", "surrogatepass")
    if len(data) <= max_bytes:
        return window
    start = len(data) - max_bytes
    while start < len(data) and (data[start] & 0xC0) == 0x80:
        start += 1
    return data[start:].decode("utf-8", "surrogatepass")


def truncate_line(line: str, max_chars: int = GREP_MAX_LINE_LENGTH) -> tuple[str, bool]:
    """Cap a line at ``max_chars`` UTF-16 code units (JavaScript string length), marking the cut."""
    if len(line) <= max_chars and _utf16_len(line) <= max_chars:
        return line, False
    kept: list[str] = []
    units = 0
    for char in line:
        width = 2 if ord(char) > 0xFFFF else 1
        if units + width > max_chars:
            break
        kept.append(char)
        units += width
    return "".join(kept) + "... [truncated]", True


def _utf16_len(text: str) -> int:
    if text.isascii():
        return len(text)
    return len(text) + sum(1 for char in text if ord(char) > 0xFFFF)
