"""Layout and text components: ``Text``, ``TruncatedText``, ``Spacer``, ``Container``, ``Box``, ``DynamicBorder``.

Every ``render(width)`` returns lines no wider than ``width``; lines are cached until the content, the width
or ``invalidate()`` changes, so treat a returned list as read-only (copy before changing it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pi_core.tui.width import truncate_to_width, visible_width, wrap_ansi

if TYPE_CHECKING:
    from pi_core.ui import Component

Style = Callable[[str], str]


def render_child(child: Component, width: int) -> list[str]:
    """A child's lines at ``width``, each cut to ``width`` whatever the child returned."""
    return [truncate_to_width(str(line), width) for line in child.render(max(1, width)) or []]


def _fill(line: str, width: int, bg: Style | None = None) -> str:
    padded = line + " " * max(0, width - visible_width(line))
    return bg(padded) if bg is not None else padded


class Text:
    """Wrapped text with ``padding_x`` columns left and right and ``padding_y`` blank lines above and below;
    lines are filled to the width (through ``bg`` when given, e.g. ``lambda s: theme.bg("toolSuccessBg", s)``).
    Empty or blank text renders no lines."""

    def __init__(self, text: str = "", padding_x: int = 1, padding_y: int = 1, bg: Style | None = None) -> None:
        self.text = text
        self.padding_x = padding_x
        self.padding_y = padding_y
        self.bg = bg
        self._cache: tuple[str, int, list[str]] | None = None

    def set_text(self, text: str) -> None:
        if text != self.text:
            self.text = text
            self._cache = None

    def set_bg(self, bg: Style | None) -> None:
        self.bg = bg
        self._cache = None

    def invalidate(self) -> None:
        self._cache = None

    def render(self, width: int) -> list[str]:
        width = max(1, width)
        if self._cache is not None and self._cache[0] == self.text and self._cache[1] == width:
            return self._cache[2]
        lines: list[str] = []
        if self.text.strip():
            pad = min(self.padding_x, max(0, (width - 1) // 2))
            margin = " " * pad
            body = [_fill(margin + line + margin, width, self.bg) for line in wrap_ansi(self.text, width - 2 * pad)]
            blank = [_fill("", width, self.bg)] * self.padding_y
            lines = [*blank, *body, *blank]
        self._cache = (self.text, width, lines)
        return lines


class TruncatedText:
    """One line of text cut to the width with an ellipsis (no wrapping); padding as ``Text``."""

    def __init__(self, text: str = "", padding_x: int = 0, padding_y: int = 0) -> None:
        self.text = text
        self.padding_x = padding_x
        self.padding_y = padding_y

    def set_text(self, text: str) -> None:
        self.text = text

    def invalidate(self) -> None:
        """Nothing cached."""

    def render(self, width: int) -> list[str]:
        width = max(1, width)
        pad = min(self.padding_x, max(0, (width - 1) // 2))
        first = self.text.split("\n", 1)[0]
        line = " " * pad + truncate_to_width(first, width - 2 * pad)
        blank = [" " * width] * self.padding_y
        return [*blank, _fill(line, width), *blank]


class Spacer:
    """``lines`` empty lines."""

    def __init__(self, lines: int = 1) -> None:
        self.lines = lines

    def set_lines(self, lines: int) -> None:
        self.lines = lines

    def invalidate(self) -> None:
        """Nothing cached."""

    def render(self, width: int) -> list[str]:
        return [""] * max(0, self.lines)


class Container:
    """Children drawn one below the other. Keys go nowhere by default: a parent routes them to the child
    that should have them."""

    def __init__(self, *children: Component) -> None:
        self.children: list[Any] = list(children)

    def add_child(self, component: Component) -> None:
        self.children.append(component)

    def remove_child(self, component: Component) -> None:
        if component in self.children:
            self.children.remove(component)

    def clear(self) -> None:
        self.children.clear()

    def invalidate(self) -> None:
        for child in self.children:
            invalidate = getattr(child, "invalidate", None)
            if callable(invalidate):
                invalidate()

    def dispose(self) -> None:
        for child in self.children:
            dispose = getattr(child, "dispose", None)
            if callable(dispose):
                dispose()

    def render(self, width: int) -> list[str]:
        lines: list[str] = []
        for child in self.children:
            lines.extend(render_child(child, width))
        return lines


class Box(Container):
    """A container with padding around its children and every line filled to the width (through ``bg``)."""

    def __init__(self, padding_x: int = 1, padding_y: int = 1, bg: Style | None = None) -> None:
        super().__init__()
        self.padding_x = padding_x
        self.padding_y = padding_y
        self.bg = bg

    def set_bg(self, bg: Style | None) -> None:
        self.bg = bg

    def render(self, width: int) -> list[str]:
        width = max(1, width)
        pad = min(self.padding_x, max(0, (width - 1) // 2))
        inner = super().render(width - 2 * pad)
        if not inner:
            return []
        blank = [_fill("", width, self.bg)] * self.padding_y
        return [*blank, *(_fill(" " * pad + line, width, self.bg) for line in inner), *blank]


class DynamicBorder:
    """A horizontal rule as wide as the component: ``─`` repeated, coloured by ``color``."""

    def __init__(self, color: Style | None = None, char: str = "─") -> None:
        self.color = color
        self.char = char

    def invalidate(self) -> None:
        """Nothing cached."""

    def render(self, width: int) -> list[str]:
        rule = self.char * max(1, width)
        return [self.color(rule) if self.color is not None else rule]
