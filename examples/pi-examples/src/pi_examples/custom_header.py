"""custom_header: the start-up header becomes the pi mascot in block letters; ``/builtin-header`` restores pi's."""

from __future__ import annotations

from typing import Any

from pi_core import SlashCommand, __version__, hookimpl
from pi_core.extension import CommandContext, ExtensionContext

BLOCK, PUPIL = "█", "▌"


def mascot(theme: Any) -> list[str]:
    eye = BLOCK + theme.fg("dim", PUPIL)
    leg = "     " + theme.fg("accent", BLOCK * 2) + "    " + theme.fg("accent", BLOCK * 2)
    return ["", f"     {eye}  {eye}", "  " + theme.fg("accent", BLOCK * 14), leg, leg, leg, leg, ""]


class Header:
    def __init__(self, theme: Any) -> None:
        self.theme = theme

    def render(self, width: int) -> list[str]:
        subtitle = self.theme.fg("muted", "   shitty coding agent") + self.theme.fg("dim", f" v{__version__}")
        return [*mascot(self.theme), subtitle]

    def invalidate(self) -> None:
        """Nothing cached."""


@hookimpl
def pi_session_start(ctx: ExtensionContext, reason: str) -> None:
    if ctx.mode == "interactive":
        ctx.ui.set_header(lambda tui, theme: Header(theme))


def builtin_header(args: str, ctx: CommandContext) -> None:
    ctx.ui.set_header(None)
    ctx.ui.notify("Built-in header restored", "info")


@hookimpl
def pi_commands() -> list[SlashCommand]:
    return [SlashCommand("builtin-header", "Restore built-in header with keybinding hints", builtin_header)]
