"""Prompt-cache warming policy (docs/config.md#cache-warming): when a refresh is due, whether a request can be
replayed, and whether a refresh pays for itself. ``pi_core.llm.cache_warmer`` owns the scheduling; this module
owns the numbers, and the one-line texts ``/session`` and the transcript show.

A model declares how long a provider keeps its prompt cache with ``promptCache`` (seconds per retention tier,
``{"short": 300, "long": 3600}``); a model without a lifetime for the request's tier is never warmed.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from pi_core.providers import StreamOptions
    from pi_core.signals import AbortSignal
    from pi_core.types import Model

Phase = Literal["streaming", "idle"]
Action = Literal["warm", "stop"]

MAX_STREAMING_AGE_MS = 60 * 60_000  # never warm past an hour after the real request that started it
MAX_IDLE_AGE_MS = 30 * 60_000  # between runs the chance of a next request fades sooner
MINIMUM_EXPECTED_SAVINGS = 0.05  # USD a refresh must be expected to save
# The chance that a real request arrives before an idle cache entry expires (Pi's measured constant).
IDLE_CONTINUATION_PROBABILITY = 0.15
MARGIN_MS = 10_000  # a refresh goes out at least this long before the entry expires


def refresh_delay_ms(ttl_ms: float) -> float | None:
    """When to refresh an entry that lives ``ttl_ms``: at 90% of its life, at least ten seconds early."""
    if ttl_ms <= MARGIN_MS:
        return None
    return max(1.0, float(int(min(ttl_ms * 0.9, ttl_ms - MARGIN_MS))))


def retention_of(options: StreamOptions) -> str:
    """The request's cache retention: its own, else ``long`` when ``PI_CACHE_RETENTION=long``, else ``short``."""
    if options.cache_retention:
        return options.cache_retention
    return "long" if os.environ.get("PI_CACHE_RETENTION") == "long" else "short"


def prompt_cache_ttl_ms(model: Model, options: StreamOptions) -> float | None:
    """How long the entry the request writes lives, from the model's ``promptCache``; None when unknown."""
    retention = retention_of(options)
    if retention == "none":
        return None
    seconds = (model.prompt_cache or {}).get(retention)
    return None if seconds is None else float(seconds) * 1000


def is_replayable(model: Model, options: StreamOptions) -> bool:
    """Whether replaying the request with a one-token cap leaves its cache entry as it was. Anthropic's budget
    thinking derives ``budget_tokens`` from ``max_tokens`` and keys its cache on it, so only adaptive thinking
    (``compat.forceAdaptiveThinking``) may be replayed there."""
    if not options.reasoning or model.api != "anthropic-messages":
        return True
    return (model.compat or {}).get("forceAdaptiveThinking") is True


def refresh_options(options: StreamOptions, signal: AbortSignal) -> StreamOptions:
    """The request's own options with one output token and no retries of the provider's SDK."""
    return dataclasses.replace(options, max_tokens=1, max_retries=0, signal=signal)


@dataclass(frozen=True, repr=False)
class Decision:
    """Whether a cache refresh pays: its cost, the cost of a miss and the expected saving."""

    phase: Phase
    warm_cost: float  # what this refresh costs
    miss_cost: float  # what the next request costs extra if the entry is lost
    continuation_probability: float
    expected_savings: float
    economics_available: bool
    action: Action


def evaluate(model: Model, prompt_tokens: int, phase: Phase) -> Decision:
    """Whether refreshing the entry of a ``prompt_tokens`` request pays for itself in ``phase``."""
    prices = model.cost
    per_token = 1 / 1_000_000
    hit = prices.cache_read * per_token * prompt_tokens
    miss = (prices.cache_write if prices.cache_write > 0 else prices.input) * per_token * prompt_tokens
    warm_cost = hit + prices.output * per_token
    miss_cost = max(0.0, miss - hit)
    probability = IDLE_CONTINUATION_PROBABILITY if phase == "idle" else 1.0
    savings = probability * miss_cost - warm_cost
    return Decision(phase=phase, warm_cost=warm_cost, miss_cost=miss_cost, continuation_probability=probability,
                    expected_savings=savings, economics_available=prompt_tokens > 0 and (hit > 0 or miss > 0),
                    action="warm" if savings >= MINIMUM_EXPECTED_SAVINGS else "stop")


# --- texts ------------------------------------------------------------------------------------------------------

@dataclass(frozen=True, repr=False)
class WarmingStatus:
    """What ``/session`` says of warming: ``inactive`` (with why), ``scheduled`` or ``refreshing``."""

    state: Literal["inactive", "scheduled", "refreshing"]
    reason: str | None = None
    next_warm_at_ms: float | None = None  # on the warmer's clock
    decision: Decision | None = None
    extension_override: bool = False


def _dollars(value: float) -> str:
    return f"-${abs(value):.3f}" if value < 0 else f"${value:.3f}"


def _economics(decision: Decision) -> str:
    if not decision.economics_available:
        return "cache economics unavailable"
    probability = f"{round(decision.continuation_probability * 100)}% continuation probability"
    if decision.phase == "streaming":
        probability += " while agent is running"
    comparison = ">=" if decision.action == "warm" else "<"
    return f"{probability}, expected savings {_dollars(decision.expected_savings)} {comparison} " \
           f"${MINIMUM_EXPECTED_SAVINGS:.3f}"


def _time_left(next_at_ms: float | None, now_ms: float) -> str:
    if next_at_ms is None or next_at_ms <= now_ms:
        return "Decision now"
    seconds = -int(-(next_at_ms - now_ms) // 1000)  # rounded up
    hours, rest = divmod(seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    parts = [f"{hours}h"] if hours else []
    parts += [f"{minutes}m"] if minutes else []
    parts += [f"{seconds}s"] if seconds or not parts else []
    return "Decision in " + " ".join(parts)


def format_status(status: WarmingStatus, now_ms: float) -> str:
    """The ``Status:`` line of ``/session``'s cache-warming section."""
    decision = status.decision
    if decision is None or (status.state == "inactive" and not decision.economics_available
                            and not status.extension_override):
        return f"Inactive ({status.reason or 'unknown reason'})"
    details = f"extension override, {_economics(decision)}" if status.extension_override \
        else f"{_economics(decision)} -> {decision.action}"
    if status.state == "inactive":
        return f"Stopped ({details})"
    if status.state == "refreshing":
        return f"Warming cache ({details})"
    return f"{_time_left(status.next_warm_at_ms, now_ms)} ({details})"


def format_warmed(total_cost: float, note: str | None = None) -> str:
    """The transcript line for one or more back-to-back refreshes: ``Cache warmed: $0.0151``."""
    cost = f"{total_cost:.6f}"
    head, _, tail = cost.partition(".")
    tail = tail[:3] + tail[3:].rstrip("0")
    return f"Cache warmed{f' ({note})' if note else ''}: ${head}.{tail}"
