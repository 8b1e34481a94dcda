"""Tool-call argument texts as models stream them, for the partial-JSON tests: realistic arguments of the
built-in tools and of MCP tools, serialized the ways the wires do (Anthropic's spaced JSON, OpenAI's compact
JSON, pretty-printed, ASCII-escaped with surrogate pairs), and the malformed texts models also send."""

from __future__ import annotations

import json
from typing import Any

ARGUMENTS: list[dict[str, Any]] = [
    {},
    {"path": "src/pi_core/loop.py", "offset": 120, "limit": 40},
    {"command": "cd /tmp && grep -rn \"TODO\" . | head -20", "timeout": 30},
    {"command": "printf 'a\\tb\\n' > out.txt && cat out.txt", "timeout": 2.5},
    {"path": "README.md", "edits": [
        {"oldText": "line one\nline \"two\"", "newText": "línea uno\n\tline 2 ✓"},
        {"oldText": "", "newText": "\\\\server\\share"}]},
    {"path": "app.py", "content": "def f(x):\n    return {\"ok\": True, 'v': x * 2.5e-3}\n# 日本語 😀 \\ backslash\n"},
    {"path": "emoji.txt", "content": "😀🎉 mixed ascii 👍🏽 and \u2028 separators \u0000 nul \x1f unit"},
    {"pattern": "def \\w+\\(self", "path": ".", "glob": "*.py", "ignoreCase": False, "context": 2, "literal": None},
    {"pattern": "**/*.ts", "path": "/home/dev/proj", "limit": 1000},
    {"path": "~/proj", "limit": -1},
    {"query": {"filters": [{"field": "age", "op": ">=", "value": 21.75}, {"field": "name", "value": None}],
               "sort": {"by": "created", "desc": True}},
     "page": 0, "ids": [1, -2, 3.0, 4e10, -5.5e-7, 123456789012345678901234567890, 0, -0.0]},
    {"we\"ird\\key": "v", "é": "ü", "": "empty key", "nested": {"": {"deep": [[], {}, [[1]]]}}},
    {"flags": [True, False, None, True], "n": 10.0, "big": 1e300, "tiny": 1e-300},
    {"todos": [{"id": i, "title": f"task {i}: \"quoted\"", "done": i % 2 == 0} for i in range(6)]},
]

# (dumps keyword arguments) as the wires and models produce them
SERIALIZATIONS: list[dict[str, Any]] = [
    {},  # Anthropic's and the fake server's: ", " and ": "
    {"separators": (",", ":"), "ensure_ascii": False},  # OpenAI-style compact UTF-8
    {"indent": 2, "ensure_ascii": False},
    {"separators": (",", ":")},  # \uXXXX escapes, surrogate pairs for emoji
]

MALFORMED: list[str] = [
    '{"content": "line1\nline2\tend"}',  # raw control characters inside a string
    '{"content": "raw\x01control", "n": 1}',
    '{"path": "C:\\dir\\sub\\new"}',  # invalid escapes (\d, \s)
    '{"path": "C:\\users\\x"}',  # \u without four hex digits
    '{"command": "echo A\\ud800B"}',  # lone high surrogate
    '{"a": "\\udc00 low first \\ude00\\ud83d"}',
    '{"a": "x\ud800y"}',  # a raw lone surrogate character (decoded upstream)
    '{"x": NaN, "y": Infinity, "z": -Infinity}',
    '{"a": 1} trailing',
    '{"a": 1}{"b": 2}',
    '{"a": 1,}',
    '{"a": 1 "b": 2}',
    "{'a': 1}",
    "{a: 1}",
    '{"a": [1, 2}',
    '{"a": falsey}',
    '{"a": 01}',
    '{"a": 1e999}',
    '{"a": .5}',
    "[1, 2]",
    '"just a string"',
    "42",
    "garbage",
    "{]",
    "   ",
    '{"deep": ' + "[" * 40 + "]" * 40 + "}",
    '{"content": "half raw\nnewline and \\d escape", "path": "x',  # malformed and cut off at once
]


def streams() -> list[str]:
    """Every complete text of the corpus: each argument object in each serialization, then the malformed."""
    texts = [json.dumps(value, **options) for value in ARGUMENTS for options in SERIALIZATIONS]
    return [*dict.fromkeys(texts), *MALFORMED]
