"""Subsequence fuzzy matching: pickers, `@` file completion, SelectList and SettingsList filters."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

T = TypeVar("T")
SEPARATORS = "/-_. :"
BRACKETS = "()[]{}<>\"'"


def fuzzy_score(query: str, text: str) -> float | None:
    """None when ``query``'s characters do not appear in order in ``text``; lower is a better match.

    A whole word of the text (space-separated, brackets ignored) equal to the query comes first: "anthropic"
    finds "Anthropic (anthropic)" before "Claude on Vertex AI (google-vertex-anthropic)". Then consecutive runs,
    matches at word starts and a short text all make the score lower.
    """
    if not query:
        return 0.0
    q, t = query.lower(), text.lower()
    if q in t and q in (word.strip(BRACKETS) for word in t.split()):
        return -1.0 + len(t) * 0.001
    if q in t:
        start = t.rfind(q)  # the last occurrence: for paths, the file name rather than a folder
        end = start + len(q)
        score = 0.0 if start == 0 or t[start - 1] in SEPARATORS else 1.0
        score += 0.0 if end == len(t) or t[end] in SEPARATORS else 0.5  # a whole word beats a prefix
        score += 0.0 if "/" not in t[start:] else 0.25
        return score + len(t) * 0.001
    score, pos, last = 10.0, 0, -2
    for char in q:
        found = t.find(char, pos)
        if found < 0:
            return None
        if found != last + 1:
            score += 1 if found == 0 or t[found - 1] in SEPARATORS else 2
        last, pos = found, found + 1
    return score + len(t) * 0.001


def fuzzy_filter(query: str, items: Iterable[T], key: Callable[[T], str]) -> list[T]:
    """The items matching ``query``, best first (stable for ties)."""
    scored = [(s, i, item) for i, item in enumerate(items) if (s := fuzzy_score(query, key(item))) is not None]
    scored.sort(key=lambda triple: (triple[0], triple[1]))
    return [item for _, _, item in scored]
