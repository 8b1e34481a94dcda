"""How deeply parsed JSON or TOML nests: config files past ``MAX_NESTING`` are refused before anything walks
them recursively (settings files, models.json and models.toml)."""

from __future__ import annotations

MAX_NESTING = 64


def nesting_depth(value: object) -> int:
    """How deep lists and tables nest (a scalar is 0), without recursing; counting stops past MAX_NESTING."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            stack.extend((child, depth + 1) for child in item.values())
        elif isinstance(item, list):
            stack.extend((child, depth + 1) for child in item)
        else:
            continue
        deepest = max(deepest, depth + 1)
        if deepest > MAX_NESTING:
            break
    return deepest
