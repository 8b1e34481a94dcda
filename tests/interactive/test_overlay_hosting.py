"""Overlay placement and keyboard focus of the interactive host (plugins/interactive/hosting.py), as Pi's TUI
does them: the arithmetic of OverlayOptions, and who gets the keys as overlays open, focus, hide and close."""

from __future__ import annotations

from typing import Any

from pi_plugins.interactive.hosting import ComponentPanel, OverlayStack, fragments
from prompt_toolkit.formatted_text import fragment_list_to_text

from pi_core.tui import CURSOR_MARKER
from pi_core.ui import OverlayOptions


class App:
    def __init__(self, columns: int = 100) -> None:
        self.columns = columns
        self.panel: Any = None  # an inline custom() component's panel, when one is open

    def width(self) -> int:
        return self.columns

    def invalidate(self) -> None:
        pass


class Panel:
    def __init__(self, rows: int = 5, name: str = "") -> None:
        self.rows, self.name = rows, name
        self.focused = False
        self.disposed = False

    def render(self, width: int) -> list[str]:
        return ["x" * width] * self.rows

    def dispose(self) -> None:
        self.disposed = True


def placed(options: OverlayOptions, rows: int = 5, columns: int = 100, screen_rows: int = 40) -> dict[str, int]:
    stack = OverlayStack(App(columns), [])  # type: ignore[arg-type]
    overlay = stack.open(Panel(rows), options)
    overlay.layout(columns, screen_rows)
    return overlay.bounds


def test_anchors_margins_offsets_and_percentages() -> None:
    assert placed(OverlayOptions(anchor="bottom-right", width=30, margin=2)) == \
        {"col": 100 - 2 - 30, "row": 40 - 2 - 5, "width": 30, "height": 5}
    assert placed(OverlayOptions(anchor="left-center", width=10)) == {"col": 0, "row": 17, "width": 10, "height": 5}
    # An absolute row/col is a screen cell: margins do not shift it (Pi), they only bound it.
    assert placed(OverlayOptions(row=2, col=4, width=34, margin={"top": 10})) == \
        {"col": 4, "row": 10, "width": 34, "height": 5}
    assert placed(OverlayOptions(row=2, col=4, width=34)) == {"col": 4, "row": 2, "width": 34, "height": 5}
    # Percentages of the free room inside the margins: 100% is the last place that still fits.
    assert placed(OverlayOptions(row="100%", col="100%", width=30, margin=1)) == \
        {"col": 100 - 1 - 30, "row": 40 - 1 - 5, "width": 30, "height": 5}
    assert placed(OverlayOptions(row="50%", col="0%", width=30)) == {"col": 0, "row": 17, "width": 30, "height": 5}
    # Offsets move it but never past the margins.
    assert placed(OverlayOptions(anchor="top-left", width=20, margin=3, offset_x=-10, offset_y=-10)) == \
        {"col": 3, "row": 3, "width": 20, "height": 5}
    # Width: percent of the screen, min_width wins over it, the room between margins caps both.
    assert placed(OverlayOptions(width="25%", min_width=30, anchor="right-center", margin={"right": 1}))["width"] == 30
    assert placed(OverlayOptions(width="50%"))["width"] == 50
    assert placed(OverlayOptions(width=500, margin=5))["width"] == 90
    # max_height cuts the rows; a size Pi cannot read ("wide", "12px") falls back instead of failing.
    assert placed(OverlayOptions(max_height=3), rows=20)["height"] == 3
    assert placed(OverlayOptions(max_height="10%"), rows=20)["height"] == 4
    assert placed(OverlayOptions(width="wide", max_height="12px", row="top"), rows=6) == \
        {"col": 10, "row": 17, "width": 80, "height": 6}


def test_a_component_width_is_the_default_width() -> None:
    panel = Panel()
    panel.width = 70  # type: ignore[attr-defined]
    stack = OverlayStack(App(), [])  # type: ignore[arg-type]
    overlay = stack.open(panel)
    overlay.layout(100, 40)
    assert overlay.bounds["width"] == 70


def test_focus_moves_like_pis_tui() -> None:
    app = App()
    stack = OverlayStack(app, [])  # type: ignore[arg-type]
    passive = Panel(name="passive")
    side = stack.open(passive, OverlayOptions(non_capturing=True))
    assert stack.target() is None and not side.is_focused()  # a non-capturing overlay leaves the editor the keys
    main = Panel(name="main")
    front = stack.open(main)
    assert stack.target() is main and main.focused and front.is_focused()
    side.focus()  # a non-capturing overlay can be given the keyboard, and is then drawn in front
    assert stack.target() is passive and passive.focused and not main.focused
    assert stack.visible(100)[-1] is side
    side.unfocus()  # back to the front-most capturing overlay
    assert stack.target() is main and not passive.focused
    front.set_hidden(True)  # hiding passes the keyboard on: to what had it before (the editor)
    assert stack.target() is None and not main.focused
    front.set_hidden(False)
    assert stack.target() is main
    app.columns = 50
    front.options.visible = lambda columns: columns >= 80
    assert stack.target() is None  # no longer visible: the keys go back
    app.columns = 100
    front.hide()
    assert main.disposed and front not in stack.items and stack.target() is None


def test_closing_passes_the_keyboard_down_the_stack() -> None:
    stack = OverlayStack(App(), [])  # type: ignore[arg-type]
    first, second, third = Panel(), Panel(), Panel()
    one, two, three = stack.open(first), stack.open(second), stack.open(third)
    assert stack.target() is third
    two.hide()  # not focused: nothing moves, but third now falls back past it
    assert stack.target() is third and three.pre_focus is first
    three.hide()
    assert stack.target() is first
    one.hide()
    assert stack.target() is None


def test_hyperlinks_and_markers_are_not_drawn_as_text() -> None:
    lines = ["\x1b]8;;file:///a/b.ts\x07▶ read: b.ts\x1b]8;;\x07 \x1b[31mred\x1b[0m" + CURSOR_MARKER + "!",
             "a\x1b]8;;https://example.invalid\x1b\\link\x1b]8;;\x1b\\"]
    drawn = fragments(lines)
    assert fragment_list_to_text(drawn) == "▶ read: b.ts red!\nalink"
    assert ("ansired", "r") in drawn  # colours still parsed


def test_an_inline_component_loses_and_regains_focus_around_an_overlay() -> None:
    app = App()
    inline = Panel(name="inline")
    inline.focused = True
    app.panel = ComponentPanel(inline)
    stack = OverlayStack(app, [])  # type: ignore[arg-type]
    passive = stack.open(Panel(), OverlayOptions(non_capturing=True))
    assert inline.focused  # a non-capturing overlay takes nothing
    overlay = stack.open(Panel())
    assert not inline.focused and stack.target() is overlay.component
    overlay.hide()
    assert inline.focused and stack.target() is None
    passive.hide()
    assert inline.focused
