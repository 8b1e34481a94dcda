"""Thinking levels: which a model supports, clamping, and the shared max-token/budget rules
(docs/providers.md#thinking-levels).

- ``supported_thinking_levels(model)``: ``["off"]`` for a non-reasoning model; otherwise the six levels
  minus those mapped to ``None`` in ``model.thinking_level_map``, and minus ``xhigh``/``max`` unless mapped.
- ``clamp_thinking_level(model, level)``: the level if supported, else the nearest supported level above,
  else below, else ``"off"``.
- ``mapped_level(model, level)``: the provider value the model's map gives for a level, or None.
- ``base_max_tokens(model, requested)``: ``requested`` or ``min(model.max_tokens, 32000)``.
- ``adjust_max_tokens_for_thinking(base, model_max, level, budgets)`` -> ``(max_tokens, budget)`` for
  budget-based APIs (Anthropic non-adaptive models).
"""

from __future__ import annotations

from pi_core.types import Model, clamp_thinking_level, supported_thinking_levels

__all__ = [
    "DEFAULT_THINKING_BUDGETS",
    "adjust_max_tokens_for_thinking",
    "base_max_tokens",
    "clamp_thinking_level",
    "mapped_level",
    "supported_thinking_levels",
    "thinking_budget",
]

DEFAULT_THINKING_BUDGETS: dict[str, int] = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384}
MAX_TOKENS_CAP = 32_000
MIN_OUTPUT_AFTER_BUDGET = 1024


def mapped_level(model: Model, level: str) -> str | None:
    """The model's own provider value for ``level`` (``thinkingLevelMap``), or None for the default mapping."""
    value = (model.thinking_level_map or {}).get(level)
    return value if isinstance(value, str) else None


def base_max_tokens(model: Model, requested: int | None) -> int | None:
    if requested is not None:
        return requested
    return min(model.max_tokens, MAX_TOKENS_CAP) if model.max_tokens else None


def thinking_budget(level: str, budgets: dict[str, int] | None = None) -> int:
    """The token budget for a level; ``xhigh`` and ``max`` use ``high``; custom budgets override the defaults."""
    merged = {**DEFAULT_THINKING_BUDGETS, **(budgets or {})}
    return merged.get("high" if level in ("xhigh", "max") else level, 1024)


def adjust_max_tokens_for_thinking(base_max: int, model_max: int, level: str,
                                   budgets: dict[str, int] | None = None) -> tuple[int, int]:
    """``max_tokens = min(base + budget, model_max)``; a budget that does not fit leaves 1024 for output."""
    budget = thinking_budget(level, budgets)
    max_tokens = min(base_max + budget, model_max)
    if max_tokens <= budget:
        budget = max(0, max_tokens - MIN_OUTPUT_AFTER_BUDGET)
    return max_tokens, budget
