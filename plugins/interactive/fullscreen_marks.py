"""Images and OSC 8 links in the fullscreen pane. prompt_toolkit's screen holds text cells only (its diffing would
split a link's open from its close, and it cannot place an image), so the pane lifts them out of each drawn row
(``lift``) and ``Overlay`` writes them over the rows in view after every frame: a link as its text again inside
OSC 8, a kitty image as a placement by id cropped to the rows shown, an iTerm2 image while all of its rows show.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Protocol

from pi_plugins.interactive import display
from pi_plugins.interactive.hosting import TERMINAL_STRINGS

from pi_core.tui import terminal
from pi_core.tui.width import visible_width

LINK = re.compile(r"\x1b\]8;[^;\x07\x1b]*;([^\x07\x1b]*)(?:\x07|\x1b\\)(.*?)\x1b\]8;;(?:\x07|\x1b\\)")
KITTY_ID = re.compile(r"\x1b_G[^;\x1b]*\bi=(\d+)")
CLOSE = "\x1b]8;;\x1b\\"


@dataclass(frozen=True)
class Link:
    column: int
    text: str  # the linked cells as drawn (their colours included)
    url: str


@dataclass(frozen=True)
class Picture:
    image: terminal.EncodedImage
    top: int  # the row of the block where the image begins (an iTerm2 sequence sits on its last row)
    column: int = 0


def lift(lines: list[str]) -> tuple[list[str], dict[int, list[Link]], list[Picture]]:
    """The rows without their OSC/APC strings, the links per row, and the images of a block's drawn rows."""
    links: dict[int, list[Link]] = {}
    pictures: list[Picture] = []
    clean: list[str] = []
    for row, line in enumerate(lines):
        if "\x1b]" not in line and "\x1b_" not in line:
            clean.append(line)
            continue
        for found in display.IMAGE_SEQUENCE.finditer(line):
            picture = _picture(found.group(0), row, visible_width(TERMINAL_STRINGS.sub("", line[:found.start()])))
            if picture is not None:
                pictures.append(picture)
        line = display.IMAGE_SEQUENCE.sub("", line)
        for found in LINK.finditer(line):
            column = visible_width(TERMINAL_STRINGS.sub("", line[:found.start()]))
            links.setdefault(row, []).append(Link(column, TERMINAL_STRINGS.sub("", found.group(2)), found.group(1)))
        clean.append(TERMINAL_STRINGS.sub("", line))
    return clean, links, pictures


def _picture(sequence: str, row: int, column: int) -> Picture | None:
    ident = KITTY_ID.search(sequence)
    if ident is not None:
        image = display.drawn.get(int(ident.group(1)))
        return None if image is None else Picture(image, row, column)
    for image in display.drawn.values():  # iTerm2: the sequence names no id; its data tells which image it is
        if image.protocol == "iterm2" and image.sequence in sequence:
            return Picture(image, row - (image.rows - 1), column)
    return None


def _at(y: int, x: int) -> str:
    return f"\x1b[{y + 1};{x + 1}H"


class _MarkedBlock(Protocol):
    links: dict[int, list[Link]]
    pictures: list[Picture]


class _Pane(Protocol):
    def block(self, index: int) -> _MarkedBlock: ...


class _Control(Protocol):
    """What the overlay reads of fullscreen_control's TranscriptControl (typed here: that module imports this one
    through the pane)."""

    @property
    def pane(self) -> _Pane: ...


class Overlay:
    """Draws the marks of the rows ``control`` showed in the last frame (the pane is the screen's top rows)."""

    def __init__(self, app: Any, control: _Control) -> None:
        self.app, self.control = app, control
        self.sent: set[int] = set()  # kitty images whose data the terminal has
        self.placed: set[int] = set()  # kitty images placed in the last frame
        self.iterm: list[tuple[int, int, int]] = []  # iTerm2 images drawn: (id, y, x)
        self.repainting = False

    def after_render(self, application: Any) -> None:
        pane = self.control.pane
        shown = list(getattr(self.control, "shown", []))
        if self.app.overlays.visible(self.app.width()):
            shown = []  # a plugin's overlay floats over the pane: nothing is drawn over it
        where = {position: y for y, position in enumerate(shown)}
        out: list[str] = []
        placed: set[int] = set()
        iterm: list[tuple[int, int, int, str]] = []
        for index in dict.fromkeys(position[0] for position in shown):
            block = pane.block(index)
            for row, links in block.links.items():
                if (index, row) in where:
                    out += [f"{_at(where[(index, row)], link.column)}\x1b[0m\x1b]8;;{link.url}\x1b\\{link.text}"
                            f"\x1b[0m{CLOSE}" for link in links]
            for picture in block.pictures:
                rows = [r for r in range(picture.top, picture.top + picture.image.rows) if (index, r) in where]
                if not rows:
                    continue
                image, y = picture.image, where[(index, rows[0])]
                if image.protocol == "kitty":
                    out.append(_at(y, picture.column) + self._kitty(image, rows[0] - picture.top, len(rows)))
                    placed.add(image.image_id)
                elif len(rows) == image.rows:
                    iterm.append((id(image), y, picture.column, image.sequence))
        out += [f"\x1b_Ga=d,d=i,i={gone},p=1,q=2\x1b\\" for gone in self.placed - placed]
        self.placed = placed
        if [entry[:3] for entry in iterm] != self.iterm:
            if self.iterm and not self.repainting:  # old cells keep an iTerm2 image: the frame is drawn afresh
                self.repainting = True
                application.renderer.erase(leave_alternate_screen=False)
                application.invalidate()
                return
            out += [_at(y, x) + sequence for _, y, x, sequence in iterm]
            self.iterm = [entry[:3] for entry in iterm]
        self.repainting = False
        if out:
            application.output.write_raw("\x1b7" + "".join(out) + "\x1b8")
            application.output.flush()

    def _kitty(self, image: terminal.EncodedImage, hidden: int, visible: int) -> str:
        sent = ""
        if image.image_id not in self.sent:  # the data once; placements by id afterwards
            self.sent.add(image.image_id)
            sent = image.sequence.replace("a=T,", "a=t,", 1)
        crop = ""
        if hidden or visible < image.rows:
            top = image.height_px * hidden // image.rows
            crop = f",y={top},h={max(1, image.height_px * (hidden + visible) // image.rows - top)}"
        return (f"{sent}\x1b_Ga=p,i={image.image_id},p=1,c={image.columns},r={visible},C=1,q=2{crop}"
                f"\x1b\\")
