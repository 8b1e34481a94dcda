"""Which thinking levels a model supports, and clamping a requested level onto them (providers.md §7)."""

from __future__ import annotations

from pi_core.types import THINKING_LEVELS, Model


def supported_thinking_levels(model: Model | None) -> list[str]:
    """``["off"]`` for a non-reasoning model; else the six levels minus those mapped to None,
    and minus ``xhigh`` unless the model maps it."""
    if model is None or not model.reasoning:
        return ["off"]
    mapping = model.thinking_level_map or {}
    levels = []
    for level in THINKING_LEVELS:
        if level in mapping and mapping[level] is None:
            continue
        if level == "xhigh" and level not in mapping:
            continue
        levels.append(level)
    return levels


def clamp_thinking_level(model: Model | None, level: str) -> str:
    """Keep a supported level; else the nearest supported above, then below; else ``off``.
    An unrecognised level becomes the first supported one."""
    supported = supported_thinking_levels(model)
    if level in supported:
        return level
    if level not in THINKING_LEVELS:
        return supported[0] if supported else "off"
    index = THINKING_LEVELS.index(level)
    for candidate in THINKING_LEVELS[index + 1 :]:
        if candidate in supported:
            return candidate
    for candidate in reversed(THINKING_LEVELS[:index]):
        if candidate in supported:
            return candidate
    return "off"


def next_thinking_level(model: Model | None, current: str) -> str | None:
    """The level after ``current`` in the supported cycle, wrapping; None without reasoning support."""
    if model is None or not model.reasoning:
        return None
    levels = supported_thinking_levels(model)
    index = levels.index(current) if current in levels else -1
    return levels[(index + 1) % len(levels)]
