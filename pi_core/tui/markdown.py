"""``Markdown``: markdown text drawn for the terminal by rich (imported when first drawn, not at start-up)."""

from __future__ import annotations

import io
from typing import Any

from pi_core.tui.width import truncate_to_width, visible_width

# rich style names -> Pi theme roles (themes.md: the md* tokens)
_ROLES = {"markdown.h1": "mdHeading", "markdown.h2": "mdHeading", "markdown.h3": "mdHeading",
          "markdown.h4": "mdHeading", "markdown.h5": "mdHeading", "markdown.h6": "mdHeading",
          "markdown.code": "mdCode", "markdown.link": "mdLink", "markdown.link_url": "mdLinkUrl",
          "markdown.block_quote": "mdQuote", "markdown.item.bullet": "mdListBullet",
          "markdown.item.number": "mdListBullet", "markdown.hr": "mdHr"}


def _rich_theme(theme: Any) -> Any:
    from rich.theme import Theme as RichTheme

    colors = getattr(theme, "colors", None)
    if not isinstance(colors, dict):
        return None
    styles: dict[str, str] = {}
    for name, role in _ROLES.items():
        value = colors.get(role)
        if isinstance(value, str) and value.startswith("#"):
            styles[name] = ("bold " if name.startswith("markdown.h") else "") + value
    return RichTheme(styles) if styles else None


class Markdown:
    """Markdown with ``padding_x`` columns each side and ``padding_y`` blank lines above and below; headings,
    code, links, quotes and bullets take the theme's ``md*`` colours when ``theme`` has ``colors``."""

    def __init__(self, text: str = "", padding_x: int = 1, padding_y: int = 0, theme: object = None) -> None:
        self.text = text
        self.padding_x = padding_x
        self.padding_y = padding_y
        self.theme = theme
        self._cache: tuple[str, int, list[str]] | None = None

    def set_text(self, text: str) -> None:
        if text != self.text:
            self.text = text
            self._cache = None

    def invalidate(self) -> None:
        self._cache = None

    def render(self, width: int) -> list[str]:
        width = max(1, width)
        if self._cache is not None and self._cache[:2] == (self.text, width):
            return self._cache[2]
        lines: list[str] = []
        if self.text.strip():
            from rich.console import Console
            from rich.markdown import Markdown as RichMarkdown

            pad = min(self.padding_x, max(0, (width - 1) // 2))
            out = io.StringIO()
            console = Console(file=out, width=max(1, width - 2 * pad), force_terminal=True, color_system="truecolor",
                              theme=_rich_theme(self.theme), legacy_windows=False, emoji=False, highlight=False)
            console.print(RichMarkdown(self.text), end="")
            body = [line.rstrip() for line in out.getvalue().rstrip("\n").split("\n")]
            while body and not visible_width(body[-1]):
                body.pop()
            blank = [""] * self.padding_y
            lines = [*blank, *(truncate_to_width(" " * pad + line, width) for line in body), *blank]
        self._cache = (self.text, width, lines)
        return lines
