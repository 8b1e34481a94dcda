"""Prompt-cache misses of a session (``showCacheMissNotices``): prompt tokens of a reply that its previous request
had already sent, so they should have been read from the cache, but were billed again.

A compaction or branch summary starts over (the next prompt is new content); a model switch does not (it
re-bills the whole prompt). A cache refresh (a ``usage`` entry of kind ``cache_warm``) counts as a request.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pi_core.export.stats import format_tokens
from pi_core.sessions.format import ms_from_iso

CACHE_TTL_MS = 5 * 60_000  # an idle gap past this is the likely cause of a miss (Anthropic's default lifetime)
NOISE_FLOOR_TOKENS = 1024  # smaller misses are the granularity of cache breakpoints
# A notice is worth showing from this many tokens or this many dollars.
NOTICE_TOKENS = 20_000
NOTICE_COST = 0.1

CacheReadPrice = Callable[[str, str], float]  # (provider, model id) -> USD per cached token read


@dataclass(frozen=True)
class CacheMiss:
    missed_tokens: int
    missed_cost: float
    idle_ms: int
    model_changed: bool

    def notice(self) -> str | None:
        """The transcript line, or None for a miss too small to mention."""
        if self.missed_tokens < NOTICE_TOKENS and self.missed_cost < NOTICE_COST:
            return None
        cost = f" (~${self.missed_cost:.2f})" if self.missed_cost >= 0.01 else ""
        label = "Cache miss"
        if self.model_changed:
            label = "Cache miss after model switch"
        elif self.idle_ms >= CACHE_TTL_MS:
            label = f"Cache miss after {round(self.idle_ms / 60_000)}m idle"
        return f"{label}: {format_tokens(self.missed_tokens)} tokens re-billed{cost}"


@dataclass(frozen=True)
class _Previous:
    prompt_tokens: int
    model_key: str
    timestamp_ms: int
    reported_cache: bool


def _int(usage: dict[str, Any], key: str) -> int:
    value = usage.get(key)
    return int(value) if isinstance(value, int | float) else 0


def _cost(usage: dict[str, Any], key: str) -> float:
    cost = usage.get("cost")
    value = cost.get(key) if isinstance(cost, dict) else None
    return float(value) if isinstance(value, int | float) else 0.0


def _prompt(usage: dict[str, Any]) -> int:
    return _int(usage, "input") + _int(usage, "cacheRead") + _int(usage, "cacheWrite")


def _miss(previous: _Previous | None, message: dict[str, Any], read_price: CacheReadPrice) -> CacheMiss | None:
    usage = message.get("usage") if isinstance(message.get("usage"), dict) else {}
    assert isinstance(usage, dict)
    prompt, read = _prompt(usage), _int(usage, "cacheRead")
    # A reply that reports no cache use counts only where the provider reported caching before: there it is a
    # total miss, on a provider that never reports caching it means nothing.
    if previous is None or prompt <= 0 or (read + _int(usage, "cacheWrite") == 0 and not previous.reported_cache):
        return None
    missed = min(previous.prompt_tokens, prompt) - read
    if missed <= NOISE_FLOOR_TOKENS:
        return None
    paid = _int(usage, "input") + _int(usage, "cacheWrite")
    paid_per_token = (_cost(usage, "input") + _cost(usage, "cacheWrite")) / paid if paid else 0.0
    provider, model = str(message.get("provider", "")), str(message.get("model", ""))
    read_per_token = _cost(usage, "cacheRead") / read if read else read_price(provider, model)
    timestamp = message.get("timestamp")
    idle = int(timestamp) - previous.timestamp_ms if isinstance(timestamp, int | float) else 0
    return CacheMiss(missed, missed * max(0.0, paid_per_token - read_per_token), max(0, idle),
                     f"{provider}/{model}" != previous.model_key)


def cache_misses(entries: list[dict[str, Any]], read_price: CacheReadPrice) -> dict[str, CacheMiss]:  # open: session entries, Pi's JSONL records
    """Each counted miss of ``entries`` (a branch, in order), by the id of the reply's entry that paid for it."""
    previous: _Previous | None = None
    misses: dict[str, CacheMiss] = {}
    for entry in entries:
        kind = entry.get("type")
        if kind in ("compaction", "branch_summary"):
            previous = None
        elif kind == "usage" and entry.get("kind") == "cache_warm" and isinstance(entry.get("usage"), dict):
            if _prompt(entry["usage"]) > 0:
                previous = _Previous(_prompt(entry["usage"]), f"{entry.get('provider')}/{entry.get('model')}",
                                     ms_from_iso(str(entry.get("timestamp"))) or 0, True)
        elif kind == "message" and isinstance(entry.get("message"), dict) and \
                entry["message"].get("role") == "assistant":
            message = entry["message"]
            miss = _miss(previous, message, read_price)
            if miss is not None:
                misses[str(entry.get("id"))] = miss
            usage = message.get("usage") if isinstance(message.get("usage"), dict) else {}
            if _prompt(usage) > 0:
                timestamp = message.get("timestamp")
                previous = _Previous(_prompt(usage), f"{message.get('provider')}/{message.get('model')}",
                                     int(timestamp) if isinstance(timestamp, int | float) else 0,
                                     (previous is not None and previous.reported_cache)
                                     or _int(usage, "cacheRead") + _int(usage, "cacheWrite") > 0)
    return misses
