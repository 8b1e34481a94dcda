"""Thinking-level rules as RPC applies them: tolerant clamping and the cycle order (rpc.md §4.3)."""

from __future__ import annotations

from pi_core.llm.thinking import clamp_thinking_level, supported_thinking_levels
from pi_core.types import THINKING_LEVELS, Model


def clamp_level(model: Model | None, level: str) -> str:
    """``clamp_thinking_level``, except that no model means ``off`` and an unrecognised level becomes
    the model's first supported one (a client may send anything)."""
    if model is None:
        return "off"
    if level not in THINKING_LEVELS:
        return supported_thinking_levels(model)[0]
    return clamp_thinking_level(model, level)


def next_thinking_level(model: Model | None, current: str) -> str | None:
    """The level after ``current`` in the supported cycle, wrapping; None without reasoning support."""
    if model is None or not model.reasoning:
        return None
    levels = supported_thinking_levels(model)
    index = levels.index(current) if current in levels else -1
    return levels[(index + 1) % len(levels)]
