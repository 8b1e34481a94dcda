"""What the QA overlays share: a titled rounded box, bordered rows, and a repeating timer on the asyncio loop."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from pi_core.tui import truncate_to_width, visible_width


def fit(text: str, inner: int) -> str:
    """One row's content cut (with "...") or padded to exactly ``inner`` columns."""
    return truncate_to_width(text, inner, "...", pad=True)


class Framed:
    """Base of the QA overlays: ``box`` draws content rows in a rounded border with a centred title."""

    def __init__(self, theme: Any) -> None:
        self.theme = theme

    def box(self, rows: list[str], width: int, title: str = "") -> list[str]:
        th, inner = self.theme, max(1, width - 2)
        label = truncate_to_width(f" {title} ", inner) if title else ""
        left = (inner - visible_width(label)) // 2
        right = max(0, inner - visible_width(label) - left)
        top = th.fg("border", "╭" + "─" * left) + th.fg("accent", label) + th.fg("border", "─" * right + "╮")
        body = [th.fg("border", "│") + fit(row, inner) + th.fg("border", "│") for row in rows]
        return [top, *body, th.fg("border", f"╰{'─' * inner}╯")]

    def framed(self, rows: list[str], width: int, colour: str = "border") -> list[str]:
        """Rows between plain top/bottom rules in ``colour`` (no title)."""
        th, inner = self.theme, max(1, width - 2)
        side = th.fg(colour, "│")
        return [th.fg(colour, f"╭{'─' * inner}╮"), *(side + fit(row, inner) + side for row in rows),
                th.fg(colour, f"╰{'─' * inner}╯")]

    def invalidate(self) -> None:
        """Drawn afresh each time."""

    def dispose(self) -> None:
        """Holds nothing by default."""


class Interval:
    """Calls ``callback`` every ``seconds`` on the running asyncio loop until ``stop()`` (JS's setInterval)."""

    def __init__(self, seconds: float, callback: Callable[[], None]) -> None:
        self.seconds, self.callback = seconds, callback
        self._loop = asyncio.get_running_loop()
        self._handle: asyncio.TimerHandle | None = self._loop.call_later(seconds, self._fire)

    def _fire(self) -> None:
        self._handle = self._loop.call_later(self.seconds, self._fire)
        self.callback()

    def stop(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
