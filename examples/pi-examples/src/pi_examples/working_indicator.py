"""working_indicator: ``/working-indicator dot|pulse|none|spinner|reset`` picks the streaming indicator."""

from __future__ import annotations

from pi_core import SlashCommand, hookimpl
from pi_core.extension import CommandContext, ExtensionContext
from pi_core.ui import WorkingIndicator

SPINNER_FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"]
PASTELS = ["\x1b[38;2;255;179;186m", "\x1b[38;2;255;223;186m", "\x1b[38;2;255;255;186m",
           "\x1b[38;2;186;255;201m", "\x1b[38;2;186;225;255m", "\x1b[38;2;218;186;255m"]
DESCRIPTIONS = {"dot": "static dot", "none": "hidden", "pulse": "custom pulse", "spinner": "custom spinner",
                "default": "pi default spinner"}


def tint(text: str, colour: str) -> str:
    return f"{colour}{text}\x1b[39m"


def indicator(name: str) -> WorkingIndicator | None:
    if name == "dot":
        return WorkingIndicator([tint("●", PASTELS[0])])
    if name == "none":
        return WorkingIndicator([])
    if name == "pulse":
        return WorkingIndicator([tint("·", PASTELS[0]), tint("•", PASTELS[2]), tint("●", PASTELS[4]),
                                 tint("•", PASTELS[5])], interval_ms=120)
    if name == "spinner":
        return WorkingIndicator([tint(f, PASTELS[i % len(PASTELS)]) for i, f in enumerate(SPINNER_FRAMES)])
    return None


def apply(ctx: ExtensionContext, mode: str) -> None:
    ctx.ui.set_working_indicator(indicator(mode))
    ctx.ui.set_status("working-indicator", ctx.ui.theme.fg("dim", f"Indicator: {DESCRIPTIONS[mode]}"))


class WorkingIndicatorPlugin:
    """A class plugin: the chosen indicator is this session's (one instance per session)."""

    def __init__(self) -> None:
        self.mode = "spinner"

    @hookimpl
    def pi_session_start(self, ctx: ExtensionContext, reason: str) -> None:
        apply(ctx, self.mode)

    def working_indicator(self, args: str, ctx: CommandContext) -> None:
        wanted = args.strip().lower()
        if not wanted:
            ctx.ui.notify(f"Working indicator: {DESCRIPTIONS[self.mode]}", "info")
            return
        if wanted not in ("dot", "none", "pulse", "spinner", "reset"):
            ctx.ui.notify("Usage: /working-indicator [dot|pulse|none|spinner|reset]", "error")
            return
        self.mode = "default" if wanted == "reset" else wanted
        apply(ctx, self.mode)
        ctx.ui.notify(f"Working indicator set to: {DESCRIPTIONS[self.mode]}", "info")

    @hookimpl
    def pi_commands(self) -> list[SlashCommand]:
        return [SlashCommand("working-indicator",
                             "Set the streaming working indicator: dot, pulse, none, spinner, or reset.",
                             self.working_indicator)]
