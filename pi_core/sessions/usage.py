"""UsageTotals: tokens and cost summed over the usage records a session file stores (replies, summaries, runs)."""

from __future__ import annotations

from dataclasses import dataclass


def _number(value: object) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


@dataclass
class UsageTotals:
    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    cost: float = 0.0

    @property
    def tokens(self) -> int:
        return self.input + self.output + self.cache_read + self.cache_write

    def add_json(self, usage: object) -> None:
        """Add one stored record (Pi's ``input``, ``output``, ``cacheRead``, ``cacheWrite``, ``cost.total``).
        Session files may hold anything: what is not a number counts as 0, and a cost without ``total`` is
        the sum of its parts."""
        if not isinstance(usage, dict):
            return
        self.input += int(_number(usage.get("input")))
        self.output += int(_number(usage.get("output")))
        self.cache_read += int(_number(usage.get("cacheRead")))
        self.cache_write += int(_number(usage.get("cacheWrite")))
        cost = usage.get("cost")
        if not isinstance(cost, dict):
            return
        total = cost.get("total")
        self.cost += _number(total) if isinstance(total, (int, float)) else sum(
            _number(cost.get(part)) for part in ("input", "output", "cacheRead", "cacheWrite"))
