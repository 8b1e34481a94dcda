"""Fullscreen mode (Pi's ``tuiMode: "fullscreen"``, ``--tui-mode fullscreen``): the app takes the terminal's
alternate screen, the transcript is a pane that scrolls (keys, wheel) above the editor fixed at the bottom.

The transcript pane is fullscreen_pane.py, its drawing and mouse fullscreen_control.py, transcript search
fullscreen_search.py; this module builds the screen, binds the ``tui.altScreen.*`` keys, keeps the mouse
selection (copied on release, ``fullscreenCopyOnSelect``) and prints the exit output (``fullscreenExitOutput``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pi_plugins.interactive.fullscreen_control import (
    Span,
    TranscriptControl,
    index_to_cell,
)
from pi_plugins.interactive.fullscreen_search import Search
from pi_plugins.interactive.keys import bind
from pi_plugins.interactive.layout import Screen
from prompt_toolkit.filters import Condition
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.layout import FloatContainer, HSplit, Window

if TYPE_CHECKING:
    from pi_plugins.interactive.fullscreen_pane import Position, TranscriptPane
    from pi_plugins.interactive.host import AppHost

TUI_MODES = ("regular", "fullscreen")
DEFAULT_TUI_MODE = "fullscreen"  # as Pi 1.6.0
EXIT_OUTPUTS = ("transcript", "resume-hint")
SCROLLBARS = ("auto", "always", "hidden")


def tui_mode(args: Any, settings: Any) -> tuple[str, str | None]:
    """The mode for this run, ``--tui-mode`` over the ``tuiMode`` setting; and a warning for a bad setting
    (a bad flag is refused by the command line)."""
    flag = getattr(args, "tui_mode", None)
    if flag in TUI_MODES:
        return flag, None
    value = settings.get("tuiMode", DEFAULT_TUI_MODE) if settings is not None else DEFAULT_TUI_MODE
    if value in TUI_MODES:
        return value, None
    return DEFAULT_TUI_MODE, (f'Invalid tuiMode setting {value!r}. Valid values: {", ".join(TUI_MODES)}; '
                              f"using {DEFAULT_TUI_MODE}")


@dataclass
class Selection:
    anchor: tuple[Position, int]  # where the drag began: (row, character index)
    head: tuple[Position, int]

    def ordered(self) -> tuple[tuple[Position, int], tuple[Position, int]]:
        return (self.anchor, self.head) if self.anchor <= self.head else (self.head, self.anchor)


class FullscreenScreen(Screen):
    """The layout of fullscreen mode: the transcript pane, then regular mode's rows below it."""

    def __init__(self, app: AppHost, pane: TranscriptPane) -> None:
        super().__init__(app)
        self.pane = pane
        self.search = Search(app, pane)
        self.selection: Selection | None = None
        self.control = TranscriptControl(
            pane, scrollbar=lambda: self._choice("fullscreenScrollbar", SCROLLBARS),
            wheel_lines=lambda: app.setting("fullscreenWheelScrollLines", "auto"),
            jump_label=self.jump_label, spans=self.spans, on_select=self.select)

    def _choice(self, key: str, choices: tuple[str, ...]) -> str:
        value = self.app.setting(key, choices[0])
        return value if value in choices else choices[0]

    def forget(self) -> None:
        super().forget()
        self.pane.forget()

    def jump_label(self) -> str:
        keys = self.app.keybindings.labels("tui.altScreen.bottom")
        return f"↓ Jump to latest message · {keys.title()}" if keys != "(unbound)" else "↓ Jump to latest message"

    def build(self) -> Any:
        transcript = Window(self.control, wrap_lines=False, always_hide_cursor=True)
        body = HSplit([transcript, *self.rows()])
        searchable = FloatContainer(body, floats=[self.search.float()])
        return FloatContainer(searchable, floats=self.app.overlays.floats)  # the stack's own list: it grows

    # --- selection --------------------------------------------------------------------------------

    def select(self, start: Position, start_index: int, end: Position, end_index: int, done: bool) -> None:
        self.selection = Selection((start, start_index), (end, end_index))
        self.app.invalidate()
        if done:
            text = self.selected_text()
            if not text:
                self.selection = None
            elif self.app.setting("fullscreenCopyOnSelect", True) is not False:
                self.copy(text)

    def selected_text(self) -> str:
        if self.selection is None:
            return ""
        (first, first_index), (last, last_index) = self.selection.ordered()
        rows = self.pane.rows_from(first, 1 + self.pane.absolute(last) - self.pane.absolute(first))
        parts = []
        for position in rows:
            text = self.pane.plain(position)
            begin = first_index if position == first else 0
            stop = last_index + 1 if position == last else len(text)
            parts.append(text[begin:stop].rstrip())
            if position == last:
                break
        return "\n".join(parts).strip("\n")

    def copy(self, text: str) -> None:
        from pi_plugins.interactive.builtin_commands import copy_to_clipboard

        try:
            how = copy_to_clipboard(text)
        except Exception as err:  # noqa: BLE001 - a clipboard tool failed: said, not fatal
            self.app.set_hint(f"Copy failed: {err}")
            return
        self.app.set_hint(f"Copied the selection ({how})")

    def copy_selection(self) -> bool:
        """Ctrl+X with ``fullscreenCopyOnSelect`` off: copy the selection, if there is one."""
        text = self.selected_text()
        if not text:
            return False
        self.copy(text)
        return True

    def spans(self) -> list[Span]:
        spans = self.search.spans(self.control.shown)
        if self.selection is None:
            return spans
        (first, first_index), (last, last_index) = self.selection.ordered()
        for position in self.control.shown:
            if not first <= position <= last:
                continue
            text = self.pane.plain(position)
            begin = index_to_cell(text, first_index) if position == first else 0
            stop = index_to_cell(text, last_index + 1) if position == last else index_to_cell(text, len(text))
            spans.append(Span(position, begin, max(begin, stop), "reverse"))
        return spans


# --- keys --------------------------------------------------------------------------------------------

def bindings(ui: AppHost, screen: FullscreenScreen) -> KeyBindings:
    """The ``tui.altScreen.*`` actions. They win over the editor's keys; while a panel (a picker, /settings,
    /model) is open or the completion menu shows, the scroll and jump keys are theirs."""
    pane, search = screen.pane, screen.search
    free = Condition(lambda: ui.panel is not None) | Condition(lambda: ui.buffer.complete_state is not None)
    searching = Condition(lambda: search.open)
    page = lambda: max(1, pane.height - 1)

    def scroll(rows: Any) -> Any:
        return lambda event: pane.scroll(rows() if callable(rows) else rows)

    table: list[tuple[str, Any, Any]] = [
        ("tui.altScreen.pageUp", scroll(lambda: -page()), ~free),
        ("tui.altScreen.pageDown", scroll(page), ~free),
        ("tui.altScreen.halfPageUp", scroll(lambda: -max(1, pane.height // 2)), ~free),
        ("tui.altScreen.halfPageDown", scroll(lambda: max(1, pane.height // 2)), ~free),
        ("tui.altScreen.lineUp", scroll(-1), ~free),
        ("tui.altScreen.lineDown", scroll(1), ~free),
        ("tui.altScreen.previousPrompt", lambda event: pane.jump_prompt(-1), ~free),
        ("tui.altScreen.nextPrompt", lambda event: pane.jump_prompt(1), ~free),
        ("tui.altScreen.top", lambda event: pane.to_top(), ~free),
        ("tui.altScreen.bottom", lambda event: pane.to_bottom(), ~free),
        ("tui.altScreen.search", lambda event: search.start(), Condition(lambda: ui.panel is None)),
        ("tui.altScreen.searchNext", lambda event: search.step(1), searching),
        ("tui.altScreen.searchPrevious", lambda event: search.step(-1), searching),
        ("tui.altScreen.searchClose", lambda event: search.close(), searching),
    ]
    keys = KeyBindings()
    for action, run, when in table:
        bind(keys, ui.keybindings.keys(action), when, run, f"keybindings: {action}", ui.startup_notes)

    def copy_or_last(event: KeyPressEvent) -> None:
        if not screen.copy_selection():
            from pi_plugins.interactive import prompting

            prompting.run_command_text(ui, "/copy")

    def page_menu(step: int) -> Any:
        def run(event: KeyPressEvent) -> None:
            state = ui.buffer.complete_state
            if state is None or not state.completions:
                return
            rows = max(3, min(20, int(ui.setting("autocompleteMaxVisible", 5) or 5)))
            index = state.complete_index if state.complete_index is not None else -1
            ui.buffer.go_to_completion(min(max(0, index + step * rows), len(state.completions) - 1))

        return run

    menu_open = Condition(lambda: ui.panel is None and ui.buffer.complete_state is not None)
    for action, step in (("tui.select.pageUp", -1), ("tui.select.pageDown", 1)):
        bind(keys, ui.keybindings.keys(action), menu_open, page_menu(step), f"keybindings: {action}",
             ui.startup_notes)

    copy_off = Condition(lambda: ui.setting("fullscreenCopyOnSelect", True) is False and ui.panel is None)
    bind(keys, ui.keybindings.keys("app.message.copy"), copy_off, copy_or_last, "keybindings: app.message.copy",
         ui.startup_notes)
    return keys


# --- leaving ------------------------------------------------------------------------------------------

def exit_output(ui: AppHost, pane: TranscriptPane) -> None:
    """After the alternate screen is left: the transcript (``fullscreenExitOutput: "transcript"``, the default),
    or nothing (``"resume-hint"``): the resume hint follows either way (lifecycle.print_resume_hint)."""
    pane.store_pending()
    if ui.setting("fullscreenExitOutput", "transcript") == "resume-hint":
        return
    for block in pane.blocks:
        ui.console.print()
        ui.console.print(block.renderable)
