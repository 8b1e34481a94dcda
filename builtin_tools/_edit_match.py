"""Locate edit targets in a file (exactly, or after fuzzy normalisation) and splice in replacements.

Fuzzy matching compares both sides after NFKC, trailing-whitespace stripping and ASCII-folding of smart
quotes, dashes and odd spaces. A match found that way is mapped back to the original text line by line,
so only the matched region changes and every other byte of the file stays as it was.
"""

from __future__ import annotations

import bisect
import itertools
import unicodedata
from dataclasses import dataclass

from pi_core.errors import ToolError

# What JavaScript's trimEnd() strips (the content is LF-only by now, so "\n" never reaches it).
_JS_WHITESPACE = "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a" \
                 "\u2028\u2029\u202f\u205f\u3000\ufeff"
_FOLD = str.maketrans({
    **dict.fromkeys(map(ord, "\u2018\u2019\u201a\u201b"), "'"),
    **dict.fromkeys(map(ord, "\u201c\u201d\u201e\u201f"), '"'),
    **dict.fromkeys(map(ord, "\u2010\u2011\u2012\u2013\u2014\u2015\u2212"), "-"),
    **dict.fromkeys(map(ord, "\u00a0\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000"), " "),
})


@dataclass
class Edit:
    old_text: str
    new_text: str


def normalize_to_lf(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def detect_line_ending(text: str) -> str:
    """CRLF when the first line break is a CRLF, else LF."""
    lf = text.find("\n")
    crlf = text.find("\r\n")
    return "\r\n" if lf >= 0 and crlf >= 0 and crlf < lf else "\n"


def _normalize_line(line: str) -> str:
    return unicodedata.normalize("NFKC", line).rstrip(_JS_WHITESPACE).translate(_FOLD)


def _strip_line_ends(text: str) -> str:
    return "\n".join([line.rstrip(_JS_WHITESPACE) for line in text.split("\n")])


def normalize_for_fuzzy_match(text: str) -> str:
    """NFKC, strip trailing whitespace per line, then fold smart quotes, dashes and special spaces to ASCII.

    Equal to normalising line by line (NFKC never joins characters across a line break), with the
    NFKC and folding passes run once over the whole text.
    """
    if text.isascii():
        return _strip_line_ends(text)
    return _strip_line_ends(unicodedata.normalize("NFKC", text)).translate(_FOLD)


@dataclass
class _Located:
    index: int  # position in the edit list
    start: int
    end: int


def apply_edits(content: str, edits: list[Edit], path: str) -> str:
    """The new content after every edit, each matched against ``content`` (LF line endings, no BOM).

    Raises ToolError with Pi's texts for empty, missing, ambiguous, overlapping or no-op edits.
    """
    single = len(edits) == 1
    edits = [Edit(normalize_to_lf(e.old_text), normalize_to_lf(e.new_text)) for e in edits]
    for i, edit in enumerate(edits):
        if not edit.old_text:
            raise ToolError(f"oldText must not be empty in {path}." if single
                            else f"edits[{i}].oldText must not be empty in {path}.")
    fuzzy_content = normalize_for_fuzzy_match(content)
    use_fuzzy = any(content.find(edit.old_text) < 0 for edit in edits)
    haystack = fuzzy_content if use_fuzzy else content
    located: list[_Located] = []
    for i, edit in enumerate(edits):
        fuzzy_old = normalize_for_fuzzy_match(edit.old_text)
        needle = fuzzy_old if use_fuzzy else edit.old_text
        start = haystack.find(needle)
        if start < 0:
            raise ToolError(
                f"Could not find the exact text in {path}. The old text must match exactly including all "
                "whitespace and newlines." if single else
                f"Could not find edits[{i}] in {path}. The oldText must match exactly including all whitespace "
                "and newlines.")
        occurrences = fuzzy_content.count(fuzzy_old)
        if occurrences > 1:
            raise ToolError(
                f"Found {occurrences} occurrences of the text in {path}. The text must be unique. Please provide "
                "more context to make it unique." if single else
                f"Found {occurrences} occurrences of edits[{i}] in {path}. Each oldText must be unique. Please "
                "provide more context to make it unique.")
        located.append(_Located(i, start, start + len(needle)))
    located.sort(key=lambda m: m.start)
    for before, after in itertools.pairwise(located):
        if before.end > after.start:
            raise ToolError(f"edits[{before.index}] and edits[{after.index}] overlap in {path}. Merge them into one "
                            "edit or target disjoint regions.")
    if use_fuzzy:
        result = _splice_fuzzy(content, fuzzy_content, located, edits)
    else:
        result = _splice(content, [(m.start, m.end, edits[m.index].new_text) for m in located])
    if result == content:
        raise ToolError(
            f"No changes made to {path}. The replacement produced identical content. This might indicate an issue "
            "with special characters or the text not existing as expected." if single else
            f"No changes made to {path}. The replacements produced identical content.")
    return result


def _splice(text: str, regions: list[tuple[int, int, str]]) -> str:
    """Replace sorted, disjoint ``(start, end, replacement)`` regions."""
    parts: list[str] = []
    cursor = 0
    for start, end, replacement in regions:
        parts.append(text[cursor:start])
        parts.append(replacement)
        cursor = end
    parts.append(text[cursor:])
    return "".join(parts)


class _LineMap:
    """Positions in one normalised line mapped back to the original line, where that is well defined."""

    def __init__(self, original: str) -> None:
        self.original = original
        self.normalized = _normalize_line(original)
        # Cut the line before every character that cannot combine with what precedes it; NFKC then works
        # piece by piece, and the piece edges are positions valid on both sides.
        pieces: list[tuple[int, str]] = []
        for col, char in enumerate(original):
            if not pieces or unicodedata.combining(char) == 0 and not 0x1160 <= ord(char) <= 0x11FF:
                pieces.append((col, char))
            else:
                pieces[-1] = (pieces[-1][0], pieces[-1][1] + char)
        self.edges: dict[int, int] = {0: 0}  # normalised column -> original column
        joined: list[str] = []
        norm_col = 0
        for col, piece in pieces:
            self.edges.setdefault(norm_col, col)
            folded = unicodedata.normalize("NFKC", piece)
            joined.append(folded)
            norm_col += len(folded)
        self.edges.setdefault(norm_col, len(original))
        if "".join(joined) != unicodedata.normalize("NFKC", original):
            self.edges = {0: 0}

    def start(self, col: int) -> int | None:
        return self.edges.get(col)

    def end(self, col: int) -> int | None:
        if col and col == len(self.normalized):
            return len(self.original)  # the trailing whitespace the model could not see goes with the match
        return self.edges.get(col)


def _splice_fuzzy(content: str, fuzzy: str, located: list[_Located], edits: list[Edit]) -> str:
    original_lines = content.split("\n")
    fuzzy_lines = fuzzy.split("\n")
    if len(original_lines) != len(fuzzy_lines):  # cannot happen with NFKC today; keep Pi's result if it does
        return _splice(fuzzy, [(m.start, m.end, edits[m.index].new_text) for m in located])
    original_starts = _line_starts(original_lines)
    fuzzy_starts = _line_starts(fuzzy_lines)
    maps: dict[int, _LineMap] = {}

    def line_map(row: int) -> _LineMap:
        if row not in maps:
            maps[row] = _LineMap(original_lines[row])
        return maps[row]

    regions: list[tuple[int, int, str]] = []
    for match in located:
        first = bisect.bisect_right(fuzzy_starts, match.start) - 1
        last = bisect.bisect_right(fuzzy_starts, match.end) - 1
        start_col = match.start - fuzzy_starts[first]
        end_col = match.end - fuzzy_starts[last]
        prefix = suffix = ""
        mapped_start = line_map(first).start(start_col)
        if mapped_start is None:  # the match begins inside a character NFKC expanded: rewrite that line's head
            mapped_start, prefix = 0, fuzzy_lines[first][:start_col]
        mapped_end = line_map(last).end(end_col)
        if mapped_end is None:
            mapped_end, suffix = len(original_lines[last]), fuzzy_lines[last][end_col:]
        regions.append((original_starts[first] + mapped_start, original_starts[last] + mapped_end,
                        prefix + edits[match.index].new_text + suffix))
    if any(a[1] > b[0] for a, b in itertools.pairwise(regions)):
        return _splice(fuzzy, [(m.start, m.end, edits[m.index].new_text) for m in located])
    return _splice(content, regions)


def _line_starts(lines: list[str]) -> list[int]:
    starts: list[int] = []
    position = 0
    for line in lines:
        starts.append(position)
        position += len(line) + 1
    return starts
