"""The display settings of the transcript (``outputPad``, ``terminal.showImages``, ``terminal.imageWidthCells``,
``terminal.clearOnShrink``) and the inline images of tool results, drawn with the terminal's image protocol.

``settings`` is the app's current choice (set from the settings file at start and by /settings), read by the
view and the built-in renderers as ``style.code_block_indent`` is.
"""

from __future__ import annotations

import asyncio
import os
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from pi_core.tui import terminal


@dataclass
class Display:
    output_pad: int = 1  # cells left and right of messages, tool output, ``!`` output and summaries
    show_images: bool = True
    image_width_cells: int = 60
    clear_on_shrink: bool = False
    cwd: str = ""  # relative paths in tool titles link to files under it

    @property
    def images_inline(self) -> bool:
        """Images are drawn (not shown as their text line)."""
        return self.show_images and terminal.capabilities().images is not None


settings = Display()


def load(read: Any) -> Display:
    """The display settings from ``read(key, default)`` (the app's ``setting``); the terminal's capability
    overrides (``terminal.images``, ``terminal.hyperlinks``) are applied too."""
    terminal.configure(images=read("terminal.images", "auto"), hyperlinks=read("terminal.hyperlinks", "auto"))
    shrink = read("terminal.clearOnShrink", None)
    width = read("terminal.imageWidthCells", 60)
    settings.output_pad = 0 if read("outputPad", 1) == 0 else 1  # Pi: 0 or 1, anything else is 1
    settings.show_images = read("terminal.showImages", True) is not False
    settings.image_width_cells = max(1, int(width)) if isinstance(width, int | float) else 60
    settings.clear_on_shrink = shrink if isinstance(shrink, bool) else os.environ.get("PI_CLEAR_ON_SHRINK") == "1"
    return settings


def padded(renderable: Any, background: str | None = None) -> Any:
    """``renderable`` with ``outputPad`` cells left and right (on ``background``, a theme role, across the row)."""
    from pi_plugins.interactive import style
    from rich.padding import Padding

    pad = settings.output_pad
    if background is None:
        return Padding(renderable, (0, pad)) if pad else renderable
    return Padding(renderable, (0, pad), style=style.bg(background), expand=True)


def image_blocks(result: Any) -> list[tuple[str, str]]:
    """The (base64 data, MIME type) of each image block of a ToolResult or its dict form."""
    content = result.get("content") if isinstance(result, dict) else getattr(result, "content", None)
    found: list[tuple[str, str]] = []
    for block in content if isinstance(content, list) else []:
        get = block.get if isinstance(block, dict) else lambda name, b=block: getattr(b, name, None)
        data = get("data")
        if get("type") == "image" and isinstance(data, str):
            found.append((data, str(get("mimeType") or get("mime_type") or "image/unknown")))
    return found


def fallback_line(data: str, mime_type: str) -> str:
    """An image's text line: ``[Image: [image/png] 800x600]``."""
    import base64
    import binascii

    from pi_core.toolkit.images import image_size

    try:
        size = image_size(base64.b64decode(data[:1024 * 1024], validate=False))
    except (binascii.Error, ValueError):
        size = None
    return terminal.image_fallback(mime_type, size)


DRAWN_KEPT = 64
drawn: dict[int, terminal.EncodedImage] = {}  # the images drawn lately, by kitty id (iTerm2: by object)


class InlineImage:
    """An image as rich draws it: the protocol's sequence on the image's rows (kitty: on the first, the cursor
    kept; iTerm2: on the last, after moving up), blank rows for the rest, so the lines below come after it."""

    def __init__(self, data: str, mime_type: str, width_cells: int) -> None:
        self.data, self.mime_type, self.width_cells = data, mime_type, width_cells
        self.image_id = random.randint(1, 0xFFFFFFFE)  # kitty: placements in fullscreen refer to it
        self._encoded: dict[int, terminal.EncodedImage | None] = {}

    def encoded(self, width: int) -> terminal.EncodedImage | None:
        columns = max(1, min(width - 2, self.width_cells))
        if columns not in self._encoded:
            image = self._encoded[columns] = terminal.encode_image(self.data, self.mime_type, columns,
                                                                   image_id=self.image_id)
            if image is not None:  # fullscreen finds it again by the sequence it wrote
                drawn[image.image_id or id(image)] = image
                while len(drawn) > DRAWN_KEPT:
                    drawn.pop(next(iter(drawn)))
        return self._encoded[columns]

    def __rich_console__(self, console: Any, options: Any) -> Iterator[Any]:
        from rich.control import ControlType
        from rich.segment import Segment
        from rich.text import Text

        image = self.encoded(options.max_width)
        if image is None:
            yield Text(fallback_line(self.data, self.mime_type), style="dim")
            return
        drawn = Segment(image.sequence, None, [(ControlType.BELL,)])  # written as is, no width
        if image.protocol == "kitty":
            yield drawn
        for _ in range(image.rows - 1):
            yield Segment.line()
        if image.protocol == "iterm2":
            yield Segment(f"\x1b[{image.rows - 1}A" if image.rows > 1 else "", None, [(ControlType.BELL,)])
            yield drawn
        yield Segment.line()  # every row ends in a new line: rich then counts them alike in a Group and a Padding


# An image's sequence in a drawn line (fullscreen lifts it out and draws it over the pane's rows).
IMAGE_SEQUENCE = re.compile(r"(?:\x1b_G[^\x1b]*\x1b\\)+|(?:\x1b\[\d+A)?\x1b\]1337;File=[^\x07]*\x07")


def tool_images(result: Any) -> list[Any]:
    """What a finished tool's images add below its output: each drawn inline, or nothing when they show as text
    lines in the output (``terminal.showImages`` off, a terminal without an image protocol)."""
    if not settings.images_inline:
        return []
    return [InlineImage(data, mime, settings.image_width_cells) for data, mime in image_blocks(result)]


def watch_shrink(app: Any) -> None:
    """``terminal.clearOnShrink`` in regular mode: when the live part had grown past the rows below it (the
    terminal scrolled for it) and shrinks again, the transcript is drawn again so no empty rows are left under
    the footer (as Pi redraws on shrink; off by default, it may flicker)."""
    redrawing = False

    def check(application: Any) -> None:
        nonlocal redrawing
        renderer = application.renderer
        last = getattr(renderer, "_last_screen", None)  # what prompt_toolkit drew last, and the rows it had
        if not settings.clear_on_shrink or redrawing or last is None or app.overlays.visible(app.width()):
            return
        size = application.output.get_size()
        wanted = application.layout.container.preferred_height(size.columns, size.rows).preferred
        if last.height > max(wanted, getattr(renderer, "_min_available_height", 0)):
            redrawing = True

            def redraw() -> None:
                nonlocal redrawing
                redrawing = False
                app.redraw_transcript()

            asyncio.get_running_loop().call_soon(redraw)

    app.app.before_render += check
