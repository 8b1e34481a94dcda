"""Terminal-column arithmetic for ANSI lines: how wide a line looks, cutting and wrapping it to a width.

Widths are display cells (wide CJK and emoji count 2, combining marks 0, escape sequences 0), measured by
``wcwidth``. A component's lines must never be wider than the width it was given; these helpers keep them so.
"""

from __future__ import annotations

import re

import wcwidth

# Where a component's text cursor is: the UI moves the terminal cursor there (IME windows follow it) and
# removes the marker. An APC sequence, so terminals that see it draw nothing.
CURSOR_MARKER = "\x1b_pi:c\x07"
RESET = "\x1b[0m"
ANSI_CODE = re.compile(r"\x1b\[[0-9;:?<=>]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b_[^\x07\x1b]*(?:\x07|\x1b\\)")


def strip_ansi(text: str) -> str:
    """``text`` without escape sequences (colours, hyperlinks, the cursor marker)."""
    return ANSI_CODE.sub("", text)


def visible_width(text: str) -> int:
    """Display columns of one line; escape sequences take none, a tab takes three (as Pi draws it)."""
    if text.isascii() and "\x1b" not in text and "\t" not in text:
        return len(text)
    return max(0, wcwidth.width(strip_ansi(text).replace("\t", "   ")))


def truncate_to_width(text: str, width: int, ellipsis: str = "…", pad: bool = False) -> str:
    """``text`` cut to ``width`` columns, ending in ``ellipsis`` when something was cut (colours kept, reset
    before the ellipsis). ``pad`` fills a shorter line with spaces up to ``width``."""
    width = max(0, width)
    text = text.replace("\t", "   ")
    current = visible_width(text)
    if current <= width:
        return text + " " * (width - current) if pad else text
    room = width - visible_width(ellipsis)
    if room < 0:
        return wcwidth.clip(ellipsis, 0, width)
    cut = wcwidth.clip(text, 0, room, fillchar="")
    if "\x1b" in cut:
        cut += RESET
    result = cut + ellipsis
    return result + " " * (width - visible_width(result)) if pad else result


def slice_by_column(text: str, start: int, end: int) -> str:
    """Columns ``start`` to ``end`` of a line, escape sequences kept (a wide cell cut in half is dropped)."""
    return wcwidth.clip(text.replace("\t", "   "), max(0, start), max(0, end), fillchar="")


def pad_to_width(text: str, width: int) -> str:
    """``text`` filled with spaces to ``width`` columns (cut with an ellipsis when wider)."""
    return truncate_to_width(text, width, pad=True)


def wrap_ansi(text: str, width: int) -> list[str]:
    """``text`` (new lines allowed) wrapped at word boundaries to ``width`` columns; words longer than a line
    are broken. Colours open at a line end are carried onto the next line, and every line that carries colour
    ends with a reset. An empty line stays an empty line."""
    width = max(1, width)
    lines: list[str] = []
    for paragraph in text.replace("\t", "   ").split("\n"):
        if not paragraph.strip():
            lines.append("")
            continue
        if visible_width(paragraph) <= width:
            lines.append(paragraph)
            continue
        lines.extend(wcwidth.wrap(paragraph, width, break_long_words=True, drop_whitespace=True) or [""])
    if any("\x1b[" in line for line in lines):
        lines = [line + RESET if "\x1b[" in line and not line.endswith(RESET) else line
                 for line in wcwidth.propagate_sgr(lines)]
    return [truncate_to_width(line, width) for line in lines]


def render_fake_cursor(char: str = " ") -> str:
    """The cell under a text cursor drawn in reverse video, preceded by ``CURSOR_MARKER``."""
    return f"{CURSOR_MARKER}\x1b[7m{char or ' '}\x1b[27m"
