"""The fullscreen transcript: what regular mode prints into the terminal's scrollback, kept as blocks in a pane.

Each committed renderable becomes a ``Block``, drawn by rich at the pane's width only when a row of it is
needed (the rows on screen, a search, the exit output), so a 10,000-line transcript costs a frame of rows per
redraw and a resize redraws only what is seen. The scroll position is a block and a row in it: it survives new
output and a change of width. While following (the default), the view sticks to the end.
"""

from __future__ import annotations

import asyncio
import io
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pi_plugins.interactive import style
from pi_plugins.interactive.fullscreen_marks import Link, Picture, lift
from pi_plugins.interactive.scrollback import Raw, Scrollback
from prompt_toolkit.formatted_text import ANSI

if TYPE_CHECKING:
    from pi_plugins.interactive.scrollback import Terminal

CONTROL_SEQUENCES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]")
Position = tuple[int, int]  # (block index, row in the block); index len(blocks) is the live part


@dataclass
class Block:
    renderable: Any
    prompt: bool = False  # a user message: where prompt jumps stop
    width: int = 0  # the width ``lines`` were drawn at (0: not drawn)
    lines: list[str] = field(default_factory=list)  # ANSI lines, a blank separator first
    plain: list[str] = field(default_factory=list)  # the same without colours (search, selection)
    fragments: list[Any] = field(default_factory=list)  # prompt_toolkit fragments per row, made when shown
    links: dict[int, list[Link]] = field(default_factory=dict)  # OSC 8 links per row (fullscreen_marks)
    pictures: list[Picture] = field(default_factory=list)  # inline images, drawn over their rows


def draw(renderable: Any, width: int) -> list[str]:
    """``renderable`` as the ANSI lines rich prints at ``width``, in the app's theme."""
    from rich.console import Console

    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=True, color_system="truecolor", width=max(1, width),
                      highlight=False)
    console.push_theme(style.rich_theme())
    console.print(renderable)
    text = buffer.getvalue().rstrip("\n")
    return text.split("\n") if text else []  # links and images still in: the pane lifts them out


class TranscriptPane(Scrollback):
    """The scrollback of fullscreen mode: commits are kept (never printed) and drawn in the pane."""

    def __init__(self, app: Terminal, *, live: Callable[[], Any], version: Callable[[], int],
                 finish: Callable[[TranscriptPane], None]) -> None:
        super().__init__(app)
        self._finish = finish  # the exit output, once the app left the alternate screen
        self.blocks: list[Block] = []
        self.width = 0
        self.height = 1  # rows of the pane at the last frame
        self.follow = True  # stick to the end as output arrives
        self.top: Position = (0, 0)  # the first row shown while not following
        self._live_source = live
        self._version = version
        self._live = Block(None)
        self._live_key: tuple[int, int, int] | None = None
        self.theme_version = 0
        self._settling: asyncio.Task[Any] | None = None

    # --- the Scrollback side: commits are kept --------------------------------------------------------

    def clear_screen(self) -> None:
        self.pending.append(Raw(self._clear))

    def _clear(self) -> None:
        self.blocks.clear()
        self.follow, self.top = True, (0, 0)

    def _drain(self) -> None:
        self.store_pending()

    def store_pending(self) -> None:
        from pi_plugins.interactive.view import UserMessage

        items, self.pending = self.pending, []
        for item in items:
            if isinstance(item, Raw):
                item.action()
            else:
                self.blocks.append(Block(item, prompt=isinstance(item, UserMessage)))
        self.app.invalidate()

    def print_pending(self) -> None:
        self.store_pending()

    def finish(self) -> None:
        self._finish(self)

    # --- drawing rows -----------------------------------------------------------------------------------

    def set_width(self, width: int) -> None:
        width = max(1, width)
        if width != self.width:
            self.width = width
            self._live_key = None
            self.settle()

    def forget(self) -> None:
        """The theme changed: every block is drawn again when next shown."""
        for block in self.blocks:
            block.width = 0
        self._live_key = None
        self.theme_version += 1

    def block(self, index: int) -> Block:
        """Block ``index`` drawn at the current width (``len(blocks)``: the live part)."""
        if index >= len(self.blocks):
            return self._live_block()
        block = self.blocks[index]
        if block.width != self.width:
            self._fill(block, ["", *draw(block.renderable, self.width)])
        return block

    def _fill(self, block: Block, lines: list[str]) -> None:
        block.width = self.width
        block.lines, block.links, block.pictures = lift(lines)
        lines = block.lines
        block.plain = [CONTROL_SEQUENCES.sub("", line) for line in lines]
        block.fragments = [None] * len(lines)

    def _live_block(self) -> Block:
        key = (self._version(), self.width, self.theme_version)
        if key != self._live_key:
            self._live_key = key
            live = self._live_source()
            self._fill(self._live, [] if live is None else ["", *draw(live, self.width)])
        return self._live

    def rows(self, index: int) -> int:
        return len(self.block(index).lines)

    def estimated_rows(self, index: int) -> int:
        """Rows of a block without drawing it (its count at the width it was last drawn at)."""
        block = self.blocks[index] if index < len(self.blocks) else self._live_block()
        return len(block.lines) if block.width else 2

    def fragments(self, position: Position) -> Any:
        block = self.block(position[0])
        row = position[1]
        if block.fragments[row] is None:
            block.fragments[row] = ANSI(block.lines[row] + "\x1b[0m").__pt_formatted_text__()
        return block.fragments[row]

    def plain(self, position: Position) -> str:
        return self.block(position[0]).plain[position[1]]

    def draw_all(self) -> None:
        for index in range(len(self.blocks)):
            self.block(index)

    def settle(self) -> None:
        """Draw the blocks not on screen in the background, a few at a time (exact scrollbar and positions)."""
        if self._settling is not None or not self.app.running:
            return

        async def run() -> None:
            try:
                index = len(self.blocks) - 1
                while index >= 0:
                    for _ in range(8):
                        if index < 0:
                            break
                        if index < len(self.blocks):
                            self.block(index)
                        index -= 1
                    await asyncio.sleep(0)
                self.app.invalidate()
            finally:
                self._settling = None

        self._settling = self.app.spawn(run())

    # --- positions ------------------------------------------------------------------------------------

    def _next(self, index: int, step: int) -> int | None:
        index += step
        while 0 <= index <= len(self.blocks):
            if self.rows(index):
                return index
            index += step
        return None

    def start(self) -> Position:
        first = self._next(-1, 1)
        return (0, 0) if first is None else (first, 0)

    def end(self) -> Position:
        last = self._next(len(self.blocks) + 1, -1)
        return (0, 0) if last is None else (last, self.rows(last) - 1)

    def back(self, position: Position, count: int) -> Position:
        index, row = position
        while count > 0:
            if row >= count:
                return index, row - count
            previous = self._next(index, -1)
            if previous is None:
                return index, 0
            count -= row + 1
            index, row = previous, self.rows(previous) - 1
        return index, row

    def forward(self, position: Position, count: int) -> Position:
        index, row = position
        while count > 0:
            rest = self.rows(index) - 1 - row
            if rest >= count:
                return index, row + count
            following = self._next(index, 1)
            if following is None:
                return index, max(0, self.rows(index) - 1)
            count -= rest + 1
            index, row = following, 0
        return index, row

    def rows_from(self, position: Position, count: int) -> list[Position]:
        shown: list[Position] = []
        index, row = position
        while len(shown) < count and index <= len(self.blocks):
            total = self.rows(index)
            while row < total and len(shown) < count:
                shown.append((index, row))
                row += 1
            index, row = index + 1, 0
        return shown

    def bottom_top(self) -> Position:
        """The first row shown when the end is at the bottom of the pane."""
        return self.back(self.end(), self.height - 1)

    def shown_top(self) -> Position:
        if self.follow:
            return self.bottom_top()
        index, row = self.top
        if index > len(self.blocks):
            return self.bottom_top()
        return index, min(row, max(0, self.rows(index) - 1))

    def visible(self, height: int) -> list[Position]:
        self.height = max(1, height)
        top = self.shown_top()
        if not self.follow and top >= self.bottom_top():
            self.follow = True  # scrolled down to the end: follow new output again
            top = self.bottom_top()
        return self.rows_from(top, self.height)

    def absolute(self, position: Position) -> int:
        return sum(self.estimated_rows(index) for index in range(position[0])) + position[1]

    def total_rows(self) -> int:
        return sum(self.estimated_rows(index) for index in range(len(self.blocks) + 1))

    # --- moving the view ------------------------------------------------------------------------------

    def scroll(self, count: int) -> None:
        """Up (negative) or down ``count`` rows."""
        top = self.shown_top()
        if count < 0:
            moved = self.back(top, -count)
            if moved < top:
                self.follow, self.top = False, moved
        elif not self.follow:
            self.top = self.forward(top, count)
            if self.top >= self.bottom_top():
                self.follow = True
        self.app.invalidate()

    def show(self, position: Position) -> None:
        """Scroll so that ``position`` is on screen (a third of the way down when it was not)."""
        top = self.shown_top()
        last = self.height - (1 if self.follow else 2)  # while scrolled up the last row is the jump label
        if top <= position <= self.forward(top, max(0, last)):
            return
        self.to(self.back(position, self.height // 3))

    def to(self, position: Position) -> None:
        self.follow, self.top = False, position
        if position >= self.bottom_top():
            self.follow = True
        self.app.invalidate()

    def to_top(self) -> None:
        self.to(self.start())

    def to_bottom(self) -> None:
        self.follow = True
        self.app.invalidate()

    def prompts(self) -> list[int]:
        return [index for index, block in enumerate(self.blocks) if block.prompt]

    def jump_prompt(self, step: int) -> None:
        """To the previous (-1) or next (1) user message; past the last one, the end."""
        top = self.shown_top()
        marks = [(index, 1) for index in self.prompts()]  # row 0 is the blank separator
        if step < 0:
            before = [mark for mark in marks if mark < top]
            if before:
                self.to(before[-1])
            return
        after = [mark for mark in marks if mark > top]
        if after:
            self.to(after[0])
        else:
            self.to_bottom()
