"""Glob patterns (``*``, ``?``, ``**``, ``[...]``, ``{a,b}``) compiled to regexes with fd/globset semantics.

``*`` and ``?`` never cross a ``/``; ``**`` as a whole path component matches any number of them.
"""

from __future__ import annotations

import re


def glob_to_regex(pattern: str) -> str:
    """A regex (anchored, no flags) matching the same paths as ``pattern``."""
    return "^" + _translate(pattern, in_braces=False)[0] + "$"


def compile_glob(pattern: str, ignore_case: bool = False) -> re.Pattern[str]:
    return re.compile(glob_to_regex(pattern), re.IGNORECASE if ignore_case else 0)


def _translate(pattern: str, in_braces: bool, start: int = 0) -> tuple[str, int]:
    """Translate from ``start`` up to the end (or, inside braces, the closing ``}``); returns (regex, end index)."""
    out: list[str] = []
    i = start
    n = len(pattern)
    while i < n:
        char = pattern[i]
        if in_braces and char in ",}":
            return "".join(out), i
        if char == "*":
            if pattern.startswith("**", i) and _at_component_start(pattern, i) and _at_component_end(pattern, i + 2):
                if i + 2 == n:
                    out.append(".*")
                    i += 2
                else:
                    # "**/" matches zero or more whole directories.
                    out.append("(?:.*/)?")
                    i += 3
                continue
            while i < n and pattern[i] == "*":
                i += 1
            out.append("[^/]*")
            continue
        if char == "?":
            out.append("[^/]")
        elif char == "[":
            end = _class_end(pattern, i)
            if end < 0:
                out.append(re.escape(char))
            else:
                body = pattern[i + 1 : end]
                negate = body[:1] in ("!", "^")
                if negate:
                    body = body[1:]
                body = body.replace("\\", "\\\\").replace("]", "\\]")
                out.append(f"[^/{body}]" if negate else f"[{body}]")
                i = end
        elif char == "{":
            alternatives: list[str] = []
            j = i + 1
            while True:
                part, j = _translate(pattern, in_braces=True, start=j)
                alternatives.append(part)
                if j >= n or pattern[j] == "}":
                    break
                j += 1
            out.append("(?:" + "|".join(alternatives) + ")")
            i = j
        elif char == "\\" and i + 1 < n:
            i += 1
            out.append(re.escape(pattern[i]))
        else:
            out.append(re.escape(char))
        i += 1
    return "".join(out), i


def _at_component_start(pattern: str, i: int) -> bool:
    return i == 0 or pattern[i - 1] == "/"


def _at_component_end(pattern: str, i: int) -> bool:
    return i == len(pattern) or pattern[i] == "/"


def _class_end(pattern: str, i: int) -> int:
    """Index of the ``]`` closing the class opened at ``i`` (a leading ``]`` is literal), or -1."""
    j = i + 1
    if j < len(pattern) and pattern[j] in "!^":
        j += 1
    if j < len(pattern) and pattern[j] == "]":
        j += 1
    end = pattern.find("]", j)
    return end
