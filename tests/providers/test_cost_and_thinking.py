from __future__ import annotations

import pytest

from pi_core.models.cost import calculate_cost
from pi_core.models.thinking import (
    adjust_max_tokens_for_thinking,
    base_max_tokens,
    clamp_thinking_level,
    mapped_level,
    supported_thinking_levels,
)
from pi_core.types import Model, ModelCost, Usage


def model(**fields: object) -> Model:
    return Model(id="m", api="anthropic-messages", provider="anthropic", **fields)  # type: ignore[arg-type]


def test_calculate_cost_per_million_tokens() -> None:
    priced = model(cost=ModelCost(input=3, output=15, cache_read=0.3, cache_write=3.75))
    cost = calculate_cost(priced, Usage(input=1_000_000, output=1_000_000))
    assert (cost.input, cost.output, cost.total) == (3, 15, 18)
    cost = calculate_cost(priced, Usage(cache_read=2_000_000, cache_write=1_000_000))
    assert cost.cache_read == pytest.approx(0.6) and cost.cache_write == pytest.approx(3.75)
    assert cost.total == pytest.approx(4.35)


def test_thinking_budget_adjusts_max_tokens() -> None:
    assert adjust_max_tokens_for_thinking(32000, 64000, "medium") == (40192, 8192)
    assert adjust_max_tokens_for_thinking(32000, 4000, "high") == (4000, 2976)
    assert adjust_max_tokens_for_thinking(32000, 64000, "xhigh") == adjust_max_tokens_for_thinking(32000, 64000, "high")
    assert adjust_max_tokens_for_thinking(1000, 64000, "low", {"low": 500}) == (1500, 500)


def test_base_max_tokens() -> None:
    assert base_max_tokens(model(max_tokens=16384), None) == 16384
    assert base_max_tokens(model(max_tokens=128000), None) == 32000
    assert base_max_tokens(model(max_tokens=128000), 100) == 100


def test_clamp_thinking_level() -> None:
    reasoning = model(reasoning=True)
    assert clamp_thinking_level(reasoning, "xhigh") == "high"
    assert clamp_thinking_level(model(reasoning=True, thinking_level_map={"xhigh": "max"}), "xhigh") == "xhigh"
    assert clamp_thinking_level(model(reasoning=True, thinking_level_map={"minimal": None, "low": None}), "low") == "medium"
    assert clamp_thinking_level(model(reasoning=False), "high") == "off"
    assert clamp_thinking_level(model(reasoning=True, thinking_level_map={"off": None}), "off") == "minimal"
    only_low = {"off": None, "minimal": None, "medium": None, "high": None}
    assert clamp_thinking_level(model(reasoning=True, thinking_level_map=only_low), "high") == "low"
    assert clamp_thinking_level(reasoning, "max") == "high"  # Pi 1.6.0's level, offered only when mapped
    assert clamp_thinking_level(model(reasoning=True, thinking_level_map={"max": "max"}), "max") == "max"
    with pytest.raises(ValueError, match="unknown thinking level 'ultra'"):
        clamp_thinking_level(reasoning, "ultra")


def test_supported_levels_and_mapping() -> None:
    assert supported_thinking_levels(model()) == ["off"]
    assert supported_thinking_levels(model(reasoning=True)) == ["off", "minimal", "low", "medium", "high"]
    mapped = model(reasoning=True, thinking_level_map={"xhigh": "max", "minimal": None})
    assert supported_thinking_levels(mapped) == ["off", "low", "medium", "high", "xhigh"]
    assert mapped_level(mapped, "xhigh") == "max"
    assert mapped_level(mapped, "minimal") is None
