"""The line-numbered diff that edit puts in ``details.diff`` (Pi's display format, not a patch)."""

from __future__ import annotations

import difflib
from dataclasses import dataclass

CONTEXT_LINES = 4


@dataclass
class EditDiff:
    diff: str
    first_changed_line: int | None


def generate_diff(old: str, new: str, context: int = CONTEXT_LINES) -> EditDiff:
    """Compare two LF texts line by line: ``-N old``, ``+N new``, `` N context``, `` (pad) ...`` for skips."""
    old_lines = old.split("\n")
    new_lines = new.split("\n")
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
        run = old_lines[i1:i2]
        change_before = n > 0
        change_after = n < len(opcodes) - 1
        if not change_before and not change_after:
            old_no += len(run)
            new_no += len(run)
            continue
        if change_before and change_after and len(run) <= 2 * context:
            head, skipped, tail = run, 0, []
        elif change_before and change_after:
            head, skipped, tail = run[:context], len(run) - 2 * context, run[-context:]
        elif change_before:
            head, skipped, tail = run[:context], max(0, len(run) - context), []
        else:
            head, skipped, tail = [], max(0, len(run) - context), run[-context:]
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


def _line_opcodes(a: list[str], b: list[str]) -> list[tuple[str, int, int, int, int]]:
    """difflib opcodes, computed only between the common head and tail (an edit touches a small middle)."""
    limit = min(len(a), len(b))
    head = 0
    while head < limit and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < limit - head and a[len(a) - 1 - tail] == b[len(b) - 1 - tail]:
        tail += 1
    middle = difflib.SequenceMatcher(None, a[head:len(a) - tail], b[head:len(b) - tail], autojunk=False)
    opcodes = [(tag, i1 + head, i2 + head, j1 + head, j2 + head) for tag, i1, i2, j1, j2 in middle.get_opcodes()
               if i1 != i2 or j1 != j2]
    if head:
        opcodes.insert(0, ("equal", 0, head, 0, head))
    if tail:
        opcodes.append(("equal", len(a) - tail, len(a), len(b) - tail, len(b)))
    merged: list[tuple[str, int, int, int, int]] = []
    for op in opcodes:
        if merged and merged[-1][0] == op[0] == "equal":
            last = merged.pop()
            op = ("equal", last[1], op[2], last[3], op[4])
        merged.append(op)
    return merged
