"""Mermaid blocks of the transcript drawn as diagrams (``markdown.mermaid``: ``off``, ``final``, ``streaming``),
as Pi 1.6.0 draws them: in the model's replies, in the theme's colours (boxes ``borderMuted``, labels ``text``,
edges ``accent``), only when the diagram fits the width; otherwise the code block stays.

``final`` draws a reply's diagrams once it is complete; ``streaming`` also while it arrives, redrawing the
diagram as its source grows. pi_core.tui.mermaid does the drawing (termaid) and caches it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

MODES = ("off", "final", "streaming")
mode = "streaming"  # markdown.mermaid, set by the app from the settings


def diagram(source: str, width: int, colour: Callable[[str], str], *, streaming: bool) -> Any:
    """A rich Text of the diagram ``source`` draws, each run in the rich style ``colour(role)`` gives its theme
    role, or None to keep the code block: mermaid drawing is off (or ``final`` and the reply still streaming),
    the kind is not drawn, or the diagram is wider than ``width``."""
    if mode == "off" or (streaming and mode != "streaming"):
        return None
    from pi_core.tui.mermaid import draw

    art = draw(source)
    if art is None or art.width > width:
        return None
    from rich.text import Text

    text = Text(no_wrap=True, overflow="crop")
    for number, row in enumerate(art.rows):
        if number:
            text.append("\n")
        for run, role in row:
            text.append(run, style=colour(role) if role else "")
    return text
