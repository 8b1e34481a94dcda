"""Transcript search (``tui.altScreen.search``): a box at the pane's top right; every match of the rendered
transcript is underlined, the selected one reversed, and the view moves to it. The first match selected is the
first at or below the top of the view, as in Pi; Enter / Shift+Enter step through them, Escape closes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pi_plugins.interactive import style
from pi_plugins.interactive.fullscreen_control import Span, index_to_cell
from prompt_toolkit.buffer import Buffer
from prompt_toolkit.filters import Condition
from prompt_toolkit.layout import Float, HSplit, VSplit, Window
from prompt_toolkit.layout.containers import ConditionalContainer
from prompt_toolkit.layout.controls import BufferControl, FormattedTextControl

if TYPE_CHECKING:
    from pi_plugins.interactive.fullscreen_pane import Position, TranscriptPane
    from pi_plugins.interactive.host import AppHost

BOX_WIDTH = 40


class Search:
    def __init__(self, app: AppHost, pane: TranscriptPane) -> None:
        self.app = app
        self.pane = pane
        self.open = False
        self.matches: list[tuple[Position, int, int]] = []  # (row, first character, end character)
        self.current = -1
        self._searched: tuple[str, int, int] | None = None  # (query, blocks, width) the matches are for
        self.buffer = Buffer(multiline=False, on_text_changed=lambda _: self.update(first=True))

    def start(self) -> None:
        self.open = True
        self.app.app.layout.focus(self.buffer)
        self.update(first=True)

    def close(self) -> None:
        self.open = False
        self.matches, self.current, self._searched = [], -1, None
        self.buffer.reset()
        self.app.app.layout.focus(self.app.buffer)
        self.app.invalidate()

    def find(self, query: str) -> None:
        key = (query, len(self.pane.blocks), self.pane.width)
        if key == self._searched:
            return
        self._searched = key
        self.matches = []
        if not query:
            return
        needle = query.lower()
        self.pane.draw_all()
        for index, block in enumerate(self.pane.blocks):
            for row, text in enumerate(block.plain):
                lowered, at = text.lower(), text.lower().find(needle)
                while at >= 0:
                    self.matches.append(((index, row), at, at + len(needle)))
                    at = lowered.find(needle, at + max(1, len(needle)))

    def update(self, *, first: bool = False) -> None:
        """The query changed: select the first match at or below the top of the view."""
        self.find(self.buffer.text)
        if not self.matches:
            self.current = -1
        elif first or self.current >= len(self.matches):
            top = self.pane.shown_top()
            self.current = next((i for i, match in enumerate(self.matches) if match[0] >= top), 0)
            self.pane.show(self.matches[self.current][0])
        self.app.invalidate()

    def step(self, direction: int) -> None:
        self.find(self.buffer.text)
        if not self.matches:
            return
        self.current = (self.current + direction) % len(self.matches)
        self.pane.show(self.matches[self.current][0])
        self.app.invalidate()

    def spans(self, shown: list[Position]) -> list[Span]:
        if not self.open or not self.matches:
            return []
        visible = set(shown)
        found = []
        for number, (position, start, end) in enumerate(self.matches):
            if position not in visible:
                continue
            text = self.pane.plain(position)
            chosen = number == self.current
            found.append(Span(position, index_to_cell(text, start), index_to_cell(text, end),
                              "reverse bold" if chosen else "underline"))
        return found

    def counter(self) -> str:
        if not self.buffer.text:
            return ""
        return f"{self.current + 1}/{len(self.matches)}" if self.matches else "0/0"

    def float(self) -> Float:
        border = style.pt("borderAccent") or style.pt("accent")

        def top() -> Any:
            return [(border, "┌" + "─" * (BOX_WIDTH - 2) + "┐")]

        def bottom() -> Any:
            hint = " ↑ Shift+Enter · ↓ Enter "
            return [(border, "└" + "─" * (BOX_WIDTH - 3 - len(hint)) + hint + "─┘")]

        def counter() -> Any:
            return [(style.pt("muted"), f" {self.counter()} "), (border, "│")]

        field = Window(BufferControl(self.buffer), height=1)
        row = VSplit([Window(FormattedTextControl([(border, "│ ")]), width=2), field,
                     Window(FormattedTextControl(counter), width=lambda: len(counter()[0][1]) + 1)], height=1)
        box = HSplit([Window(FormattedTextControl(top), height=1), row,
                      Window(FormattedTextControl(bottom), height=1)], width=BOX_WIDTH)
        return Float(ConditionalContainer(box, filter=Condition(lambda: self.open)), top=0, right=1)

