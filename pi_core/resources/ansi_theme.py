"""A theme as plugins use it (``ctx.ui.theme``): ``fg("accent", text)`` wraps text in the role's ANSI colour."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pi_core.resources.themes import Theme


def _rgb(value: str) -> tuple[int, int, int] | None:
    text = value.lstrip("#")
    if len(text) != 6:
        return None
    try:
        return int(text[0:2], 16), int(text[2:4], 16), int(text[4:6], 16)
    except ValueError:
        return None


class AnsiTheme:
    """Pi's Theme API over a resources ``Theme``; ``source`` is read on every call, so a theme switch shows at
    once. Roles without a colour ("" = the terminal's default) leave the text uncoloured."""

    def __init__(self, source: Theme | Callable[[], Theme]) -> None:
        self._source = source

    @property
    def theme(self) -> Theme:
        return self._source() if callable(self._source) else self._source

    @property
    def name(self) -> str:
        return self.theme.name

    @property
    def appearance(self) -> str:
        return self.theme.appearance

    @property
    def colors(self) -> dict[str, str]:
        return dict(self.theme.colors)

    def _wrap(self, role: str, text: str, layer: int) -> str:
        rgb = _rgb(self.theme.color(role))
        if rgb is None:
            return text
        r, g, b = rgb
        return f"\x1b[{layer};2;{r};{g};{b}m{text}\x1b[{layer + 1}m"

    def fg(self, color: str, text: str) -> str:
        return self._wrap(color, text, 38)

    def bg(self, color: str, text: str) -> str:
        return self._wrap(color, text, 48)

    def bold(self, text: str) -> str:
        return f"\x1b[1m{text}\x1b[22m"

    def italic(self, text: str) -> str:
        return f"\x1b[3m{text}\x1b[23m"

    def underline(self, text: str) -> str:
        return f"\x1b[4m{text}\x1b[24m"

    def strikethrough(self, text: str) -> str:
        return f"\x1b[9m{text}\x1b[29m"

    def __repr__(self) -> str:
        return f"AnsiTheme({self.name!r})"
