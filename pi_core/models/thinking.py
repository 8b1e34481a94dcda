"""Thinking levels: which a model supports, clamping, and the shared max-token/budget rules
(docs/providers.md#thinking-levels).

- ``supported_thinking_levels(model)``: ``["off"]`` for a non-reasoning model; otherwise the six levels
  minus those mapped to ``None`` in ``model.thinking_level_map``, and minus ``xhigh`` unless it is mapped.
- ``clamp_thinking_level(model, level)``: the level if supported, else the nearest supported level above,
  else below, else ``"off"``.
- ``mapped_level(model, level)``: the provider value the model's map gives for a level, or None.
- ``base_max_tokens(model, requested)``: ``requested`` or ``min(model.max_tokens, 32000)``.
- ``adjust_max_tokens_for_thinking(base, model_max, level, budgets)`` -> ``(max_tokens, budget)`` for
  budget-based APIs (Anthropic non-adaptive models).
"""

from __future__ import annotations

from pi_core.types import THINKING_LEVELS, Model

DEFAULT_THINKING_BUDGETS: dict[str, int] = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384}
MAX_TOKENS_CAP = 32_000
MIN_OUTPUT_AFTER_BUDGET = 1024


def supported_thinking_levels(model: Model) -> list[str]:
    if not model.reasoning:
        return ["off"]
    level_map = model.thinking_level_map or {}
    levels = []
    for level in THINKING_LEVELS:
        if level in level_map and level_map[level] is None:
            continue
        if level == "xhigh" and level_map.get("xhigh") is None:
            continue
        levels.append(level)
    return levels


def clamp_thinking_level(model: Model, level: str) -> str:
    if level not in THINKING_LEVELS:
        raise ValueError(f"unknown thinking level {level!r}; valid: {', '.join(THINKING_LEVELS)}")
    supported = supported_thinking_levels(model)
    if level in supported:
        return level
    position = THINKING_LEVELS.index(level)
    for candidate in THINKING_LEVELS[position + 1:]:
        if candidate in supported:
            return candidate
    for candidate in reversed(THINKING_LEVELS[:position]):
        if candidate in supported:
            return candidate
    return "off"


def mapped_level(model: Model, level: str) -> str | None:
    """The model's own provider value for ``level`` (``thinkingLevelMap``), or None for the default mapping."""
    value = (model.thinking_level_map or {}).get(level)
    return value if isinstance(value, str) else None


def base_max_tokens(model: Model, requested: int | None) -> int | None:
    if requested is not None:
        return requested
    return min(model.max_tokens, MAX_TOKENS_CAP) if model.max_tokens else None


def thinking_budget(level: str, budgets: dict[str, int] | None = None) -> int:
    """The token budget for a level; ``xhigh`` uses ``high``; custom budgets override the defaults."""
    merged = {**DEFAULT_THINKING_BUDGETS, **(budgets or {})}
    return merged.get("high" if level == "xhigh" else level, 1024)


def adjust_max_tokens_for_thinking(base_max: int, model_max: int, level: str,
                                   budgets: dict[str, int] | None = None) -> tuple[int, int]:
    """``max_tokens = min(base + budget, model_max)``; a budget that does not fit leaves 1024 for output."""
    budget = thinking_budget(level, budgets)
    max_tokens = min(base_max + budget, model_max)
    if max_tokens <= budget:
        budget = max(0, max_tokens - MIN_OUTPUT_AFTER_BUDGET)
    return max_tokens, budget
