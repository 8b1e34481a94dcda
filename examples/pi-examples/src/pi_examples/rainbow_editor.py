"""rainbow_editor: "ultrathink" typed in the editor glows in rainbow colours with a travelling shine."""

from __future__ import annotations

import asyncio
import re

from pi_core import hookimpl
from pi_core.extension import ExtensionContext
from pi_core.tui import CustomEditor

COLOURS = [(233, 137, 115), (228, 186, 103), (141, 192, 122), (102, 194, 179), (121, 157, 207), (157, 134, 195),
           (206, 130, 172)]  # coral, yellow, green, teal, blue, purple, pink
WORD = re.compile("ultrathink", re.IGNORECASE)
FRAME_SECONDS = 0.06


def brighten(rgb: tuple[int, int, int], factor: float) -> str:
    r, g, b = (round(c + (255 - c) * factor) for c in rgb)
    return f"\x1b[38;2;{r};{g};{b}m"


def colorize(text: str, shine: int) -> str:
    """Each letter its own colour; the letter at ``shine`` (and, dimmer, its neighbours) brightened."""
    out = []
    for i, char in enumerate(text):
        distance = abs(i - shine) if shine >= 0 else 99
        factor = 0.7 if distance == 0 else 0.35 if distance == 1 else 0.0
        out.append(brighten(COLOURS[i % len(COLOURS)], factor) + char)
    return "".join(out) + "\x1b[0m"


class RainbowEditor(CustomEditor):
    frame = 0
    animation: asyncio.Task[None] | None = None

    def handle_input(self, data: str) -> None:
        super().handle_input(data)
        if WORD.search(self.get_text()):
            if self.animation is None:
                self.animation = asyncio.get_running_loop().create_task(self._animate())
        elif self.animation is not None:
            self.animation.cancel()
            self.animation = None

    async def _animate(self) -> None:
        while True:
            await asyncio.sleep(FRAME_SECONDS)
            self.frame += 1
            self.tui.request_render()

    def render(self, width: int) -> list[str]:
        cycle = self.frame % 20  # ten shine positions, then ten frames of rest
        shine = cycle if cycle < 10 else -1
        return [WORD.sub(lambda m: colorize(m.group(0), shine), line) for line in super().render(width)]

    def dispose(self) -> None:
        if self.animation is not None:
            self.animation.cancel()


@hookimpl
def pi_session_start(ctx: ExtensionContext, reason: str) -> None:
    ctx.ui.set_editor_component(lambda tui, theme, keybindings: RainbowEditor(tui, theme, keybindings))
