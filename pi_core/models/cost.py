"""Token cost in USD from a model's prices (USD per million tokens): docs/providers.md#usage-and-cost."""

from __future__ import annotations

from pi_core.types import Cost, CostTier, Model, ModelCost, Usage


def calculate_cost(model: Model, usage: Usage) -> Cost:
    """Fill ``usage.cost`` from ``model.cost`` (and return it). Call again whenever usage changes.

    A tier applies when the request's whole input (fresh + cache read + cache write) is above its threshold;
    the highest such threshold wins.
    """
    prices: ModelCost | CostTier = model.cost
    prompt = usage.input + usage.cache_read + usage.cache_write
    for tier in model.cost.tiers or ():
        if prompt > tier.input_tokens_above and (not isinstance(prices, CostTier)
                                                 or tier.input_tokens_above > prices.input_tokens_above):
            prices = tier
    cost = usage.cost
    cost.input = prices.input / 1_000_000 * usage.input
    cost.output = prices.output / 1_000_000 * usage.output
    cost.cache_read = prices.cache_read / 1_000_000 * usage.cache_read
    cost.cache_write = prices.cache_write / 1_000_000 * usage.cache_write
    cost.total = cost.input + cost.output + cost.cache_read + cost.cache_write
    return cost


def update_total_tokens(usage: Usage) -> None:
    """``totalTokens`` = input + output + cacheRead + cacheWrite (Anthropic and Chat Completions)."""
    usage.total_tokens = usage.input + usage.output + usage.cache_read + usage.cache_write
