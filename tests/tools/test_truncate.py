"""Shared truncation helpers (docs/tools.md#truncation)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from pi_core.toolkit.truncate import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_LINES,
    GREP_MAX_LINE_LENGTH,
    format_size,
    truncate_head,
    truncate_line,
    truncate_tail,
)


def test_constants() -> None:
    assert (DEFAULT_MAX_LINES, DEFAULT_MAX_BYTES, GREP_MAX_LINE_LENGTH) == (2000, 51200, 500)


def test_head_by_lines() -> None:
    r = truncate_head("a\nb\nc", max_lines=2)
    assert (r.content, r.truncated, r.truncated_by, r.output_lines, r.total_lines) == ("a\nb", True, "lines", 2, 3)
    assert r.output_bytes == 3 and r.total_bytes == 5


def test_head_first_line_over_limit() -> None:
    r = truncate_head("x" * 60 * 1024 + "\nshort")
    assert r.content == "" and r.first_line_exceeds_limit and r.truncated_by == "bytes"
    assert (r.output_lines, r.output_bytes) == (0, 0)


def test_head_by_bytes_keeps_whole_lines() -> None:
    content = "\n".join("y" * 99 for _ in range(1000))  # 100 bytes a line with its newline
    r = truncate_head(content)
    assert r.truncated_by == "bytes"
    assert r.output_lines == 512 and r.content.count("\n") == 511
    assert r.output_bytes == len(r.content.encode()) <= DEFAULT_MAX_BYTES


def test_untouched_when_within_limits() -> None:
    r = truncate_head("a\nb\n")
    assert (r.content, r.truncated, r.truncated_by, r.total_lines, r.output_lines) == ("a\nb\n", False, None, 3, 3)
    assert not truncate_tail("a\nb\n").truncated


def test_tail_single_long_line_cut_at_utf8_boundary() -> None:
    line = "é" * (30 * 1024)  # 60 KB, two bytes per character
    r = truncate_tail(line)
    assert r.last_line_partial and r.truncated_by == "bytes" and r.output_lines == 1
    encoded = r.content.encode()
    assert len(encoded) <= DEFAULT_MAX_BYTES and line.endswith(r.content)
    assert r.output_bytes == len(encoded) == 51200

    odd = "a" + "é" * (30 * 1024)  # the byte cut would fall inside a character: skip forward
    r = truncate_tail(odd)
    assert r.content == "é" * 25600 and r.output_bytes == 51200


def test_tail_keeps_last_lines() -> None:
    content = "\n".join(f"line {i}" for i in range(1, 3001))
    r = truncate_tail(content)
    assert r.truncated_by == "lines" and r.output_lines == 2000
    assert r.content.startswith("line 1001\n") and r.content.endswith("line 3000")


def test_tail_by_bytes_drops_line_that_does_not_fit() -> None:
    content = "z" * 40000 + "\n" + "w" * 20000
    r = truncate_tail(content)
    assert r.content == "w" * 20000 and r.truncated_by == "bytes" and not r.last_line_partial


def test_truncate_line() -> None:
    assert truncate_line("x" * 501) == ("x" * 500 + "... [truncated]", True)
    assert truncate_line("x" * 500) == ("x" * 500, False)
    # Length counts UTF-16 units, as JavaScript does: an emoji is two.
    assert truncate_line("😀" * 250) == ("😀" * 250, False)
    assert truncate_line("😀" * 251)[1]


def test_format_size() -> None:
    assert format_size(1023) == "1023B"
    assert format_size(51200) == "50.0KB"
    assert format_size(1572864) == "1.5MB"
    assert format_size(1280) == "1.3KB"  # JavaScript's toFixed rounds the tie up


@given(st.text(alphabet=st.sampled_from(["a", "é", "\n", "😀", "b"]), max_size=400),
       st.integers(1, 30), st.integers(1, 200))
def test_invariants(content: str, max_lines: int, max_bytes: int) -> None:
    for fn in (truncate_head, truncate_tail):
        r = fn(content, max_lines=max_lines, max_bytes=max_bytes)
        assert r.total_bytes == len(content.encode()) and r.total_lines == content.count("\n") + 1
        assert r.output_bytes == len(r.content.encode()) <= max(max_bytes, 0)
        assert r.output_lines <= max_lines
        assert r.truncated == (r.content != content)
        if fn is truncate_head:
            assert content.startswith(r.content)
        else:
            assert content.endswith(r.content)


def reference_tail(content: str, max_lines: int, max_bytes: int) -> tuple[str, str | None, int, bool]:
    """Tail truncation (docs/tools.md#truncation) written line by line, to check the windowed implementation against."""
    lines = content.split("\n")
    if len(lines) <= max_lines and len(content.encode()) <= max_bytes:
        return content, None, len(lines), False
    kept: list[str] = []
    used = 0
    by = "lines"
    for line in reversed(lines):
        if len(kept) >= max_lines:
            break
        cost = len(line.encode()) + (1 if kept else 0)
        if used + cost > max_bytes:
            by = "bytes"
            if not kept:
                data = line.encode()
                start = len(data) - max_bytes
                while start < len(data) and (data[start] & 0xC0) == 0x80:
                    start += 1
                return data[start:].decode(), "bytes", 1, True
            break
        kept.insert(0, line)
        used += cost
    if len(kept) >= max_lines and used <= max_bytes:
        by = "lines"
    return "\n".join(kept), by, len(kept), False


@given(st.text(alphabet=st.sampled_from(["a", "é", "\n", "😀", "b", "\n", "\n"]), max_size=600),
       st.integers(1, 40), st.integers(1, 120))
def test_tail_matches_line_by_line_reference(content: str, max_lines: int, max_bytes: int) -> None:
    r = truncate_tail(content, max_lines=max_lines, max_bytes=max_bytes)
    assert (r.content, r.truncated_by, r.output_lines, r.last_line_partial) == reference_tail(
        content, max_lines, max_bytes)
