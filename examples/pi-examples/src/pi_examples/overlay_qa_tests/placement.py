"""Where an overlay lands: the nine anchors, margins and offsets, percentages, the right edge, max height,
and a side panel that only shows on wide terminals."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pi_core.extension import CommandContext
from pi_core.tui import matches_key
from pi_core.ui import OverlayOptions
from pi_examples.overlay_qa_tests.frame import Framed, fit

ANCHORS = ["top-left", "top-center", "top-right", "left-center", "center", "right-center", "bottom-left",
           "bottom-center", "bottom-right"]


def closes(data: str) -> bool:
    return matches_key(data, "escape") or matches_key(data, "ctrl+c")


def advances(data: str) -> bool:
    return matches_key(data, "space") or matches_key(data, "right")


class AnchorPanel(Framed):
    """Names its anchor; Space/Right asks for the next, Enter confirms, Escape cancels."""

    def __init__(self, theme: Any, anchor: str, done: Callable[[str], None]) -> None:
        super().__init__(theme)
        self.anchor, self.done = anchor, done

    def handle_input(self, data: str) -> None:
        if closes(data):
            self.done("cancel")
        elif matches_key(data, "enter"):
            self.done("confirm")
        elif advances(data):
            self.done("next")

    def render(self, width: int) -> list[str]:
        th = self.theme
        return self.box(["", f" Current: {th.fg('accent', self.anchor)}", "",
                         f" {th.fg('dim', 'Space/→ = next anchor')}", f" {th.fg('dim', 'Enter = confirm')}",
                         f" {th.fg('dim', 'Esc = cancel')}", ""], width, "Anchor Test")


class StepPanel(Framed):
    """One step of a cycling test (margins, percentages): names the configuration; Space/Right = next."""

    def __init__(self, theme: Any, title: str, name: str, hint: str, done: Callable[[str], None]) -> None:
        super().__init__(theme)
        self.title, self.name, self.hint, self.done = title, name, hint, done

    def handle_input(self, data: str) -> None:
        if closes(data):
            self.done("close")
        elif advances(data):
            self.done("next")

    def render(self, width: int) -> list[str]:
        th = self.theme
        return self.box(["", f" {th.fg('accent', self.name)}", "", f" {th.fg('dim', self.hint)}",
                         f" {th.fg('dim', 'Esc = close')}", ""], width, self.title)


class ClosePanel(Framed):
    """Fixed rows; Escape closes it."""

    def __init__(self, theme: Any, title: str, rows: Callable[[Any], list[str]], done: Callable[[Any], None]) -> None:
        super().__init__(theme)
        self.title, self.rows, self.done = title, rows, done

    def handle_input(self, data: str) -> None:
        if closes(data):
            self.done(None)

    def render(self, width: int) -> list[str]:
        return self.box(self.rows(self.theme), width, self.title)


def edge_rows(th: Any) -> list[str]:
    return ["", " This overlay is at the", " right edge of terminal.", "", f" {th.fg('dim', 'Verify right border')}",
            f" {th.fg('dim', 'aligns with edge.')}", "", f" {th.fg('dim', 'Press Esc to close')}", ""]


def tall_rows(th: Any) -> list[str]:
    """21 content rows (23 with the border): max_height 10 keeps the title row and the first nine."""
    rows = [th.fg("warning", " ⚠ Rendering 21 lines, maxHeight: 10"),
            th.fg("dim", " Lines 11-21 truncated (no bottom border)"), ""]
    rows += [f" Line {i} of 14" for i in range(1, 15)]
    return [*rows, "", th.fg("dim", " Press Esc to close")]


class SidePanel(Framed):
    """A menu that floats on the right on wide terminals only (``visible``); Up/Down move the selection."""

    items = ("Dashboard", "Messages", "Settings", "Help", "About")

    def __init__(self, tui: Any, theme: Any, done: Callable[[Any], None]) -> None:
        super().__init__(theme)
        self.tui, self.done, self.selected = tui, done, 0

    def handle_input(self, data: str) -> None:
        if closes(data):
            self.done(None)
        elif matches_key(data, "up"):
            self.selected = max(0, self.selected - 1)
        elif matches_key(data, "down"):
            self.selected = min(len(self.items) - 1, self.selected + 1)
        self.tui.request_render()

    def render(self, width: int) -> list[str]:
        th, inner = self.theme, max(1, width - 2)
        side, rule = th.fg("border", "│"), th.fg("border", "├" + "─" * inner + "┤")

        def row(text: str) -> str:
            return side + fit(text, inner) + side

        menu = [row(th.fg("accent", f"→ {item}") if i == self.selected else f"  {item}")
                for i, item in enumerate(self.items)]
        return [th.fg("border", f"╭{'─' * inner}╮"), row(th.fg("accent", " Responsive Sidepanel")), rule, *menu,
                rule, row(th.fg("warning", " ⚠ Resize terminal < 100 cols")),
                row(th.fg("warning", "   to see panel auto-hide")), row(th.fg("dim", " Uses visible: (w) => w >= 100")),
                row(th.fg("dim", " ↑↓ navigate | Esc close")), th.fg("border", f"╰{'─' * inner}╯")]


@dataclass
class Step:
    name: str
    options: OverlayOptions


MARGIN_STEPS = [
    Step("No margin (top-left)", OverlayOptions(anchor="top-left", width=35)),
    Step("Margin: 3 all sides", OverlayOptions(anchor="top-left", width=35, margin=3)),
    Step("Margin: top=5, left=10", OverlayOptions(anchor="top-left", width=35, margin={"top": 5, "left": 10})),
    Step("Center + offset (10, -3)", OverlayOptions(anchor="center", width=35, offset_x=10, offset_y=-3)),
    Step("Bottom-right, margin: 2", OverlayOptions(anchor="bottom-right", width=35, margin=2)),
]

PERCENT_STEPS = [
    Step(name, OverlayOptions(width=30, row=f"{row}%", col=f"{col}%"))
    for name, row, col in [("rowPercent: 0 (top)", 0, 50), ("rowPercent: 50 (middle)", 50, 50),
                           ("rowPercent: 100 (bottom)", 100, 50), ("colPercent: 0 (left)", 50, 0),
                           ("colPercent: 100 (right)", 50, 100)]
]


async def cycle(ctx: CommandContext, steps: list[Step], title: str, hint: str) -> None:
    """Show each step's overlay in turn (Space/Right wraps around) until Escape."""
    index = 0
    while True:
        step = steps[index]
        result = await ctx.ui.custom(
            lambda tui, theme, kb, done, step=step: StepPanel(theme, title, step.name, hint, done),
            overlay=True, overlay_options=step.options)
        if result != "next":
            return
        index = (index + 1) % len(steps)


async def overlay_anchors(args: str, ctx: CommandContext) -> None:
    index = 0
    while True:
        anchor = ANCHORS[index]
        result = await ctx.ui.custom(lambda tui, theme, kb, done, anchor=anchor: AnchorPanel(theme, anchor, done),
                                     overlay=True, overlay_options=OverlayOptions(anchor=anchor, width=40))
        if result == "next":
            index = (index + 1) % len(ANCHORS)
            continue
        if result == "confirm":
            ctx.ui.notify(f"Selected: {anchor}", "info")
        return


async def overlay_margins(args: str, ctx: CommandContext) -> None:
    await cycle(ctx, MARGIN_STEPS, "Margin Test", "Space/→ = next config")


async def overlay_percent(args: str, ctx: CommandContext) -> None:
    await cycle(ctx, PERCENT_STEPS, "Percent Test", "Space/→ = next")


async def overlay_edge(args: str, ctx: CommandContext) -> None:
    await ctx.ui.custom(lambda tui, theme, kb, done: ClosePanel(theme, "Edge Test", edge_rows, done), overlay=True,
                        overlay_options=OverlayOptions(anchor="right-center", width=40, margin={"right": 0}))


async def overlay_maxheight(args: str, ctx: CommandContext) -> None:
    await ctx.ui.custom(lambda tui, theme, kb, done: ClosePanel(theme, "MaxHeight Test", tall_rows, done),
                        overlay=True, overlay_options=OverlayOptions(anchor="center", width=50, max_height=10))


async def overlay_sidepanel(args: str, ctx: CommandContext) -> None:
    await ctx.ui.custom(lambda tui, theme, kb, done: SidePanel(tui, theme, done), overlay=True,
                        overlay_options=OverlayOptions(anchor="right-center", width="25%", min_width=30,
                                                       margin={"right": 1}, visible=lambda columns: columns >= 100))
