"""Where a JSON pointer (``/providers/x/models/0/id``) sits in a models file's text, as 1-based line and column.

Only run when a file has errors, so the happy path never pays for it. JSON is re-read with the standard
library's pure-Python scanner, whose object and array parsers are hooks: wrapping them records where each
member's value starts. TOML has no such hooks in ``tomllib``; its keys and table headers are matched line by line,
which finds every key a models.toml can hold (values inside inline tables resolve to their enclosing key's line).
"""

from __future__ import annotations

import json
import json.decoder
import json.scanner
import re
from collections.abc import Callable
from typing import Any

Position = tuple[int, int]


def line_col(text: str, offset: int) -> Position:
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def locate(text: str, pointer: str, *, toml: bool, key_name: Callable[[str], str] = str) -> Position:
    """The position of the value at ``pointer`` (or of its deepest ancestor present), (1, 1) when none is."""
    parts = [p for p in pointer.split("/")[1:]] if pointer else []
    try:
        return _locate_toml(text, parts, key_name) if toml else _locate_json(text, parts)
    except (ValueError, RecursionError):
        return 1, 1


def _locate_json(text: str, parts: list[str]) -> Position:
    starts: dict[int, dict[str, int] | list[int]] = {}  # id(container) -> where each member's value starts

    def parse_object(s_and_end: tuple[str, int], strict: bool, scan_once: Any, hook: Any, pairs_hook: Any,
                     memo: Any = None) -> tuple[Any, int]:
        offsets: list[int] = []
        obj, end = json.decoder.JSONObject(  # type: ignore[attr-defined]
            s_and_end, strict, _recording(scan_once, offsets), hook, None, memo)
        starts[id(obj)] = dict(zip(obj, offsets, strict=False)) if len(obj) == len(offsets) else {}
        return obj, end

    def parse_array(s_and_end: tuple[str, int], scan_once: Any) -> tuple[Any, int]:
        offsets: list[int] = []
        arr, end = json.decoder.JSONArray(  # type: ignore[attr-defined]
            s_and_end, _recording(scan_once, offsets))
        starts[id(arr)] = offsets
        return arr, end

    decoder = json.JSONDecoder()
    decoder.parse_object = parse_object  # type: ignore[attr-defined]
    decoder.parse_array = parse_array  # type: ignore[attr-defined]
    decoder.memo = {}  # type: ignore[attr-defined]
    scan = json.scanner.py_make_scanner(decoder)  # type: ignore[attr-defined]
    begin = len(text) - len(text.lstrip())
    node, _end = scan(text, begin)
    offset = begin
    for part in parts:
        members = starts.get(id(node))
        if isinstance(node, dict) and isinstance(members, dict) and part in members:
            node, offset = node[part], members[part]
        elif isinstance(node, list) and isinstance(members, list) and part.isdigit() and int(part) < len(node):
            node, offset = node[int(part)], members[int(part)]
        else:
            break
    return line_col(text, offset)


def _recording(scan_once: Any, offsets: list[int]) -> Callable[[str, int], Any]:
    # JSONObject/JSONArray call scan_once exactly once per member value, at the value's first character.
    def scan(s: str, idx: int) -> Any:
        offsets.append(idx)
        return scan_once(s, idx)
    return scan


_HEADER = re.compile(r"^\s*(\[\[?)\s*(.+?)\s*\]\]?\s*(#.*)?$")
_KEY = re.compile(r"""^(\s*)((?:"[^"]*"|'[^']*'|[A-Za-z0-9_-]+)(?:\s*\.\s*(?:"[^"]*"|'[^']*'|[A-Za-z0-9_-]+))*)\s*=""")
_KEY_PART = re.compile(r""""([^"]*)"|'([^']*)'|([A-Za-z0-9_-]+)""")


def _key_parts(dotted: str, key_name: Callable[[str], str]) -> list[str]:
    return [key_name(m.group(1) or m.group(2) or m.group(3) or "") for m in _KEY_PART.finditer(dotted)]


def _locate_toml(text: str, parts: list[str], key_name: Callable[[str], str]) -> Position:
    best: tuple[int, Position] = (0, (1, 1))
    table: list[str] = []
    counts: dict[tuple[str, ...], int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        header = _HEADER.match(line)
        if header and "=" not in line.split("]")[0]:
            names = _key_parts(header.group(2), key_name)
            if header.group(1) == "[[":
                index = counts.get(tuple(names), -1) + 1
                counts[tuple(names)] = index
                names = [*names, str(index)]
            table = names
            full, column = table, line.index("[") + 1
        else:
            key = _KEY.match(line)
            if not key:
                continue
            full, column = [*table, *_key_parts(key.group(2), key_name)], len(key.group(1)) + 1
        depth = _common_prefix(full, parts)
        if depth == len(full) and depth > best[0]:
            best = (depth, (number, column))
    return best[1]


def _common_prefix(a: list[str], b: list[str]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n
