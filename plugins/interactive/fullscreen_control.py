"""The transcript pane on screen: only the rows in view are drawn, with the scrollbar, the "Jump to latest
message" row, search highlights and the mouse selection; the wheel scrolls it and a drag selects.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pi_plugins.interactive import style
from prompt_toolkit.formatted_text.utils import fragment_list_width
from prompt_toolkit.layout.controls import UIContent, UIControl
from prompt_toolkit.mouse_events import (
    MouseButton,
    MouseEvent,
    MouseEventType,
    MouseModifier,
)
from prompt_toolkit.utils import get_cwidth

if TYPE_CHECKING:
    from pi_plugins.interactive.fullscreen_pane import Position, TranscriptPane

ALT_WHEEL_FACTOR = 5  # Alt+wheel moves five times as far (settings.md, fullscreenWheelScrollLines)
AUTO_WHEEL_MOST = 6
FAST_WHEEL_SECONDS = 0.05  # wheel events closer than this are one fast spin
DOUBLE_CLICK_SECONDS = 0.4


@dataclass
class Span:
    """Cells ``start``..``end`` of one transcript row, drawn in ``style``."""

    position: Position
    start: int
    end: int
    style: str


def split_cells(fragments: Any, spans: list[tuple[int, int, str]]) -> Any:
    """``fragments`` with the cells of each span (start, end, style) restyled; other cells as they were."""
    if not spans:
        return fragments
    out: list[tuple[str, str]] = []
    column = 0
    for fragment in fragments:
        fragment_style, text = fragment[0], fragment[1]
        for char in text:
            extra = next((s for start, end, s in spans if start <= column < end), None)
            out.append((f"{fragment_style} {extra}" if extra else fragment_style, char))
            column += get_cwidth(char)
    return out


def cell_to_index(text: str, cell: int) -> int:
    """The index in ``text`` of the character drawn at ``cell``."""
    column = 0
    for index, char in enumerate(text):
        width = get_cwidth(char)
        if column + width > cell:
            return index
        column += width
    return len(text)


def word_at(text: str, index: int) -> tuple[int, int] | None:
    """The first and last index of the word around ``index``: a run without spaces, so a path or a kebab-case
    name is one word (as in Pi)."""
    if not 0 <= index < len(text) or text[index].isspace():
        return None
    start = index
    while start > 0 and not text[start - 1].isspace():
        start -= 1
    end = index
    while end + 1 < len(text) and not text[end + 1].isspace():
        end += 1
    return start, end


def index_to_cell(text: str, index: int) -> int:
    return sum(get_cwidth(char) for char in text[:index])


class TranscriptControl(UIControl):
    """Draws ``pane``'s visible rows; ``spans`` gives the highlights of a row (search, selection)."""

    def __init__(self, pane: TranscriptPane, *, scrollbar: Callable[[], str], wheel_lines: Callable[[], Any],
                 jump_label: Callable[[], str], spans: Callable[[], list[Span]],
                 on_select: Callable[[Position, int, Position, int, bool], None]) -> None:
        self.pane = pane
        self.scrollbar = scrollbar
        self.wheel_lines = wheel_lines
        self.jump_label = jump_label
        self.spans = spans
        self.on_select = on_select
        self.shown: list[Position] = []
        self.hovered = False
        self._last_wheel = 0.0
        self._spin = 0
        self._drag: tuple[Position, int] | None = None
        self._last_click: tuple[float, int, int] = (0.0, -1, -1)

    def is_focusable(self) -> bool:
        return False

    def create_content(self, width: int, height: int) -> UIContent:
        pane = self.pane
        pane.set_width(width - 1)  # the last column is the scrollbar's: text never reflows when it shows
        shown = self.shown = pane.visible(height)
        spans: dict[Position, list[tuple[int, int, str]]] = {}
        for span in self.spans():
            spans.setdefault(span.position, []).append((span.start, span.end, span.style))
        lines = [split_cells(pane.fragments(position), spans.get(position, [])) for position in shown]
        lines += [[] for _ in range(height - len(lines))]
        if not pane.follow and lines:
            lines[-1] = self._jump_row(width - 1)
        bar = self._scrollbar_cells(height)
        drawn = []
        for line, cell in zip(lines, bar):
            pad = width - 1 - fragment_list_width(line)
            drawn.append([*line, ("", " " * max(0, pad)), cell])
        return UIContent(get_line=lambda index: drawn[index], line_count=len(drawn), show_cursor=False)

    def _jump_row(self, width: int) -> Any:
        label = self.jump_label()
        left = max(0, (width - get_cwidth(label)) // 2)
        return [("", " " * left), (f"{style.pt('accent')} bold", label)]

    def _scrollbar_cells(self, height: int) -> list[tuple[str, str]]:
        mode = self.scrollbar()
        blank = [("", " ")] * height
        if mode == "hidden" or (mode == "auto" and self.pane.follow and not self.hovered):
            return blank
        total = max(1, self.pane.total_rows())
        if total <= height:
            return blank
        top = self.pane.absolute(self.shown[0]) if self.shown else 0
        size = max(1, height * height // total)
        start = min(height - size, top * height // total)
        if self.pane.follow:
            start = height - size
        track = style.pt("scrollbarTrack") or style.pt("muted")
        thumb = style.pt("scrollbarThumb") or style.pt("text") or "fg:ansiwhite"
        return [(thumb, "┃") if start <= row < start + size else (track, "│") for row in range(height)]

    # --- the mouse ----------------------------------------------------------------------------------

    def wheel_step(self, alt: bool) -> int:
        setting = self.wheel_lines()
        now = time.monotonic()
        if isinstance(setting, int) and not isinstance(setting, bool) and 1 <= setting <= 100:
            step = setting
        else:  # "auto": a fast spin speeds up, to at most AUTO_WHEEL_MOST rows an event
            self._spin = min(AUTO_WHEEL_MOST, self._spin + 1) if now - self._last_wheel < FAST_WHEEL_SECONDS else 1
            step = self._spin
        self._last_wheel = now
        return step * (ALT_WHEEL_FACTOR if alt else 1)

    def position_at(self, x: int, y: int) -> tuple[Position, int] | None:
        if not self.shown:
            return None
        position = self.shown[min(max(0, y), len(self.shown) - 1)]
        return position, cell_to_index(self.pane.plain(position), max(0, x))

    def mouse_handler(self, mouse_event: MouseEvent) -> Any:
        kind = mouse_event.event_type
        x, y = mouse_event.position.x, mouse_event.position.y
        alt = MouseModifier.ALT in mouse_event.modifiers
        if kind in (MouseEventType.SCROLL_UP, MouseEventType.SCROLL_DOWN):
            step = self.wheel_step(alt)
            self.pane.scroll(-step if kind == MouseEventType.SCROLL_UP else step)
            return None
        if kind == MouseEventType.MOUSE_MOVE and mouse_event.button == MouseButton.NONE:
            if not self.hovered:
                self.hovered = True
                self.pane.app.invalidate()
            return None
        if kind == MouseEventType.MOUSE_DOWN and mouse_event.button == MouseButton.LEFT:
            if not self.pane.follow and y == self.pane.height - 1:
                self.pane.to_bottom()  # the "Jump to latest message" row
                return None
            now, (last, last_x, last_y) = time.monotonic(), self._last_click
            self._last_click = (now, x, y)
            self._drag = self.position_at(x, y)
            if self._drag is not None and now - last < DOUBLE_CLICK_SECONDS and (x, y) == (last_x, last_y):
                position, index = self._drag
                word = word_at(self.pane.plain(position), index)
                self._drag = None
                if word is not None:
                    self.on_select(position, word[0], position, word[1], True)
                return None
            if self._drag is not None:
                self.on_select(*self._drag, *self._drag, False)
            return None
        if kind in (MouseEventType.MOUSE_MOVE, MouseEventType.MOUSE_UP) and self._drag is not None:
            here = self.position_at(x, y)
            if here is not None:
                self.on_select(*self._drag, *here, kind == MouseEventType.MOUSE_UP)
            if kind == MouseEventType.MOUSE_UP:
                self._drag = None
            return None
        return NotImplemented
