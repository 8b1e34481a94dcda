"""The line-numbered diff that edit puts in ``details.diff`` (Pi's display format, not a patch).

An edit changes a small middle of a possibly huge file, so the texts are never split into line lists
as a whole: the common head and tail are found by comparing characters in blocks, and only the
differing middle is split and handed to difflib. Context lines around it are cut out on demand.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass

CONTEXT_LINES = 4
_BLOCK = 1 << 16


@dataclass
class EditDiff:
    diff: str
    first_changed_line: int | None


def generate_diff(old: str, new: str, context: int = CONTEXT_LINES) -> EditDiff:
    """Compare two LF texts line by line: ``-N old``, ``+N new``, `` N context``, `` (pad) ...`` for skips."""
    old_lines, new_lines = _split_around_change(old, new)
    width = len(str(max(len(old_lines), len(new_lines))))
    skip = f" {' ' * width} ..."
    opcodes = _line_opcodes(old_lines, new_lines)
    out: list[str] = []
    first_changed: int | None = None
    old_no = new_no = 1
    for n, (tag, i1, i2, j1, j2) in enumerate(opcodes):
        if tag != "equal":
            if first_changed is None:
                first_changed = new_no
            for line in old_lines[i1:i2]:
                out.append(f"-{str(old_no).rjust(width)} {line}")
                old_no += 1
            for line in new_lines[j1:j2]:
                out.append(f"+{str(new_no).rjust(width)} {line}")
                new_no += 1
            continue
        length = i2 - i1
        change_before = n > 0
        change_after = n < len(opcodes) - 1
        if not change_before and not change_after:
            old_no += length
            new_no += length
            continue
        if change_before and change_after and length <= 2 * context:
            head, skipped, tail = old_lines[i1:i2], 0, []
        elif change_before and change_after:
            head, skipped, tail = old_lines[i1:i1 + context], length - 2 * context, _last(old_lines, i1, i2, context)
        elif change_before:
            head, skipped, tail = old_lines[i1:min(i2, i1 + context)], max(0, length - context), []
        else:
            head, skipped, tail = [], max(0, length - context), _last(old_lines, i1, i2, context)
        for line in head:
            out.append(f" {str(old_no).rjust(width)} {line}")
            old_no += 1
            new_no += 1
        if skipped:
            out.append(skip)
            old_no += skipped
            new_no += skipped
        for line in tail:
            out.append(f" {str(old_no).rjust(width)} {line}")
            old_no += 1
            new_no += 1
    return EditDiff("\n".join(out), first_changed)


def _last(lines: _Lines, i1: int, i2: int, context: int) -> list[str]:
    """The last ``context`` lines of ``[i1, i2)``; all of them for 0 (as ``run[-0:]`` always gave)."""
    return lines[i1:i2] if context == 0 else lines[max(i1, i2 - context):i2]


class _Lines:
    """``text.split("\\n")`` as a sliceable sequence that holds only the differing middle as a list.

    Lines ``[0, head)`` and ``[count - tail, count)`` are equal in both texts; they are cut out of
    ``text`` when a slice asks for them, walking from the nearest known line start.
    """

    def __init__(self, text: str, head: int, head_at: int, tail: int, tail_at: int) -> None:
        self.text = text
        self.count = text.count("\n") + 1
        self.head, self.head_at = head, head_at
        self.tail_start, self.tail_at = self.count - tail, tail_at
        self.middle = text[head_at:tail_at - 1].split("\n") if self.tail_start > head else []

    def __len__(self) -> int:
        return self.count

    def __getitem__(self, part: slice) -> list[str]:
        start, stop, _ = part.indices(self.count)
        out: list[str] = []
        while start < stop:
            if start < self.head:
                end = min(stop, self.head)
                out += self._cut((0, self.head, 0, self.head_at), start, end)
            elif start < self.tail_start:
                end = min(stop, self.tail_start)
                out += self.middle[start - self.head:end - self.head]
            else:
                end = stop
                out += self._cut((self.tail_start, self.count, self.tail_at, len(self.text) + 1), start, end)
            start = end
        return out

    def _cut(self, region: tuple[int, int, int, int], start: int, stop: int) -> list[str]:
        """Lines ``[start, stop)`` of one equal region ``(first index, end index, offset of its first line,
        offset of the line after it)``, walking from its nearer end."""
        first, end, first_at, end_at = region
        text = self.text
        if start - first <= end - stop:
            at = first_at
            for _ in range(start - first):
                at = text.index("\n", at) + 1
            out = []
            for _ in range(stop - start):
                cut = text.find("\n", at)
                cut = len(text) if cut < 0 else cut
                out.append(text[at:cut])
                at = cut + 1
            return out
        at = end_at
        for _ in range(end - stop):
            at = text.rfind("\n", 0, at - 1) + 1
        back = []
        for _ in range(stop - start):
            begin = text.rfind("\n", 0, at - 1) + 1
            back.append(text[begin:at - 1])
            at = begin
        return back[::-1]


def _split_around_change(a: str, b: str) -> tuple[_Lines, _Lines]:
    """Both texts' lines with the head and tail that the line diff treats as equal left unsplit.

    ``head``/``tail`` are exactly what a greedy line-by-line comparison would find (tail limited so the
    two never overlap); the character-level common prefix and suffix only give it a head start.
    """
    count_a, count_b = a.count("\n") + 1, b.count("\n") + 1
    limit = min(count_a, count_b)
    prefix = _common_prefix(a, b)
    head = a.count("\n", 0, prefix)
    at_a = at_b = a.rfind("\n", 0, prefix) + 1
    while head < limit:
        end_a, end_b = _line_end(a, at_a), _line_end(b, at_b)
        if a[at_a:end_a] != b[at_b:end_b]:
            break
        head, at_a, at_b = head + 1, end_a + 1, end_b + 1
    suffix = _common_suffix(a, b)
    tail = a.count("\n", len(a) - suffix)
    if tail > limit - head:
        tail = limit - head
        end_a, end_b = _nth_line_from_end(a, tail), _nth_line_from_end(b, tail)
    elif tail:
        end_a, end_b = a.find("\n", len(a) - suffix) + 1, b.find("\n", len(b) - suffix) + 1
    else:
        end_a, end_b = len(a) + 1, len(b) + 1
    while tail < limit - head:
        begin_a, begin_b = a.rfind("\n", 0, end_a - 1) + 1, b.rfind("\n", 0, end_b - 1) + 1
        if a[begin_a:end_a - 1] != b[begin_b:end_b - 1]:
            break
        tail, end_a, end_b = tail + 1, begin_a, begin_b
    return _Lines(a, head, at_a, tail, end_a), _Lines(b, head, at_b, tail, end_b)


def _line_end(text: str, at: int) -> int:
    cut = text.find("\n", at)
    return len(text) if cut < 0 else cut


def _nth_line_from_end(text: str, n: int) -> int:
    """Offset where the last ``n`` lines begin (``len + 1`` for none)."""
    at = len(text) + 1
    for _ in range(n):
        at = text.rfind("\n", 0, at - 1) + 1
    return at


def _agreeing_length(limit: int, same: Callable[[int, int], bool]) -> int:
    """How many of the first ``limit`` places agree, ``same(i, j)`` telling whether places ``i`` to ``j`` do:
    blocks of ``_BLOCK`` are compared, and the first one that differs is halved down to the place."""
    i = 0
    while i < limit:
        j = min(i + _BLOCK, limit)
        if not same(i, j):
            while j - i > 1:  # the first difference is in [i, j)
                mid = (i + j) // 2
                if same(i, mid):
                    i = mid
                else:
                    j = mid
            return i
        i = j
    return limit


def _common_prefix(a: str, b: str) -> int:
    return _agreeing_length(min(len(a), len(b)), lambda i, j: a[i:j] == b[i:j])


def _common_suffix(a: str, b: str) -> int:
    la, lb = len(a), len(b)
    return _agreeing_length(min(la, lb), lambda i, j: a[la - j:la - i] == b[lb - j:lb - i])


def _line_opcodes(a: _Lines, b: _Lines) -> list[tuple[str, int, int, int, int]]:
    """difflib opcodes, computed only between the common head and tail (an edit touches a small middle)."""
    head, tail = a.head, a.count - a.tail_start
    middle = difflib.SequenceMatcher(None, a.middle, b.middle, autojunk=False)
    opcodes = [(tag, i1 + head, i2 + head, j1 + head, j2 + head) for tag, i1, i2, j1, j2 in middle.get_opcodes()
               if i1 != i2 or j1 != j2]
    if head:
        opcodes.insert(0, ("equal", 0, head, 0, head))
    if tail:
        opcodes.append(("equal", a.count - tail, a.count, b.count - tail, b.count))
    merged: list[tuple[str, int, int, int, int]] = []
    for op in opcodes:
        if merged and merged[-1][0] == op[0] == "equal":
            last = merged.pop()
            op = ("equal", last[1], op[2], last[3], op[4])
        merged.append(op)
    return merged
