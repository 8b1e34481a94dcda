"""overlay_test: ``/overlay-test`` floats a 70-column overlay with wide/styled/emoji edge cases and a menu
whose first two items carry inline text inputs; Enter reports the pick, Escape closes it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pi_core import SlashCommand, hookimpl
from pi_core.extension import CommandContext
from pi_core.tui import CURSOR_MARKER, matches_key, render_fake_cursor, visible_width


@dataclass
class Item:
    label: str
    has_input: bool
    text: str = ""
    cursor: int = 0


@dataclass
class Pick:
    action: str
    query: str | None = None


class OverlayTestComponent:
    """The overlay: Up/Down choose an item, typing edits the chosen item's input, Enter picks, Escape cancels."""

    width = 70

    def __init__(self, theme: Any, done: Callable[[Pick | None], None]) -> None:
        self.theme, self.done = theme, done
        self.focused = False
        self.selected = 0
        self.items = [Item("Search", True), Item("Run", True), Item("Settings", False), Item("Cancel", False)]

    def handle_input(self, data: str) -> None:
        if matches_key(data, "escape"):
            self.done(None)
            return
        current = self.items[self.selected]
        if matches_key(data, "enter"):
            self.done(Pick(current.label, current.text if current.has_input else None))
        elif matches_key(data, "up"):
            self.selected = max(0, self.selected - 1)
        elif matches_key(data, "down"):
            self.selected = min(len(self.items) - 1, self.selected + 1)
        elif current.has_input:
            self._edit(current, data)

    @staticmethod
    def _edit(item: Item, data: str) -> None:
        if matches_key(data, "backspace"):
            if item.cursor > 0:
                item.text = item.text[:item.cursor - 1] + item.text[item.cursor:]
                item.cursor -= 1
        elif matches_key(data, "left"):
            item.cursor = max(0, item.cursor - 1)
        elif matches_key(data, "right"):
            item.cursor = min(len(item.text), item.cursor + 1)
        elif len(data) == 1 and ord(data) >= 32:
            item.text = item.text[:item.cursor] + data + item.text[item.cursor:]
            item.cursor += 1

    def _item_line(self, item: Item, selected: bool) -> str:
        th = self.theme
        prefix = " ▶ " if selected else "   "
        if not item.has_input:
            return prefix + th.fg("accent" if selected else "text", item.label)
        label = th.fg("accent" if selected else "text", f"{item.label}:")
        shown = item.text
        if selected:
            at = shown[item.cursor] if item.cursor < len(shown) else " "
            cell = render_fake_cursor(at)  # leads with CURSOR_MARKER: the terminal cursor goes there when focused
            if not self.focused:
                cell = cell.replace(CURSOR_MARKER, "")
            shown = shown[:item.cursor] + cell + shown[item.cursor + 1:]
        return f"{prefix}{label} {shown}"

    def render(self, width: int) -> list[str]:
        th, inner = self.theme, self.width - 2

        def row(content: str) -> str:
            return th.fg("border", "│") + content + " " * max(0, inner - visible_width(content)) + th.fg("border", "│")

        lines = [th.fg("border", f"╭{'─' * inner}╮"), row(f" {th.fg('accent', '🧪 Overlay Test')}"), row(""),
                 row(f" {th.fg('dim', '─── Edge Cases (borders should align) ───')}"),
                 row(f" Wide: {th.fg('warning', '中文日本語한글テスト漢字繁體简体ひらがなカタカナ가나다라마바')}"),
                 row(f" Styled: {th.fg('error', 'RED')} {th.fg('success', 'GREEN')} {th.fg('warning', 'YELLOW')} "
                     f"{th.fg('accent', 'ACCENT')} {th.fg('dim', 'DIM')} {th.fg('error', 'more')} "
                     f"{th.fg('success', 'colors')}"),
                 row(" Emoji: 👨‍👩‍👧‍👦 🇯🇵 🚀 💻 🎉 🔥 😀 🎯 🌟 💡 🎨 🔧 📦 🏆 🌈 🎪 🎭 🎬 🎮 🎲"), row(""),
                 row(f" {th.fg('dim', '─── Actions ───')}")]
        lines += [row(self._item_line(item, i == self.selected)) for i, item in enumerate(self.items)]
        lines += [row(""), row(f" {th.fg('dim', '↑↓ navigate • type to input • Enter select • Esc cancel')}"),
                  th.fg("border", f"╰{'─' * inner}╯")]
        return lines

    def invalidate(self) -> None:
        """Drawn afresh each time."""

    def dispose(self) -> None:
        """Holds nothing."""


async def overlay_test(args: str, ctx: CommandContext) -> None:
    result = await ctx.ui.custom(lambda tui, theme, keybindings, done: OverlayTestComponent(theme, done),
                                 overlay=True)
    if isinstance(result, Pick):
        ctx.ui.notify(f'{result.action}: "{result.query}"' if result.query else result.action, "info")


@hookimpl
def pi_commands() -> list[SlashCommand]:
    return [SlashCommand(name="overlay-test", description="Test overlay rendering with edge cases",
                         handler=overlay_test)]
