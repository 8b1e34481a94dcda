"""Several overlays at once with the keyboard moving between them: a passive timer beside a capturing panel,
three non-capturing panels focused through their handles, and input panels beside a streaming log."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pi_core.extension import CommandContext
from pi_core.tui import Input, matches_key
from pi_core.ui import OverlayHandle, OverlayOptions
from pi_examples.overlay_qa_tests.frame import Framed, Interval
from pi_examples.overlay_qa_tests.placement import closes


def printable(data: str) -> bool:
    return len(data) == 1 and ord(data) >= 32


class TimerPanel(Framed):
    """mm:ss since it opened; ticked by its owner."""

    def __init__(self, theme: Any) -> None:
        super().__init__(theme)
        self.seconds = 0

    def render(self, width: int) -> list[str]:
        th = self.theme
        minutes, seconds = divmod(self.seconds, 60)
        return self.box([f" {th.fg('accent', f'{minutes:02d}:{seconds:02d}')}", th.fg("dim", " nonCapturing: true")],
                        width, "Timer")


class PassiveDemo(Framed):
    """A capturing panel that counts and echoes the keys it gets while a non-capturing timer ticks top right."""

    def __init__(self, tui: Any, theme: Any, done: Callable[[Any], None]) -> None:
        super().__init__(theme)
        self.tui, self.done = tui, done
        self.focused = False  # set by the host while this panel has the keyboard
        self.typed = ""
        self.inputs = 0
        self.last = ""
        self.timer = TimerPanel(theme)
        self.timer_handle: OverlayHandle | None = tui.show_overlay(self.timer, OverlayOptions(
            non_capturing=True, anchor="top-right", width=22, margin={"top": 1, "right": 2}))
        self.ticker: Interval | None = Interval(1, self._tick)

    def _tick(self) -> None:
        self.timer.seconds += 1
        self.tui.request_render()

    def handle_input(self, data: str) -> None:
        self.inputs += 1
        self.last = f"len={len(data)} c0={ord(data[0]) if data else 0}"
        if closes(data):
            self.dispose()
            self.done(None)
        elif matches_key(data, "backspace"):
            self.typed = self.typed[:-1]
        elif printable(data):
            self.typed += data

    def render(self, width: int) -> list[str]:
        th = self.theme
        shown = self.typed or th.fg("dim", "(type here)")
        state = f"focused={str(self.focused).lower()} inputs={self.inputs}"
        return self.box(["", f" {th.fg('dim', state)}", f" {th.fg('dim', 'last: ' + (self.last or 'none'))}", "",
                         f" > {shown}", "", th.fg("dim", " Type to prove input goes here."),
                         th.fg("dim", " Press Esc to close both."), ""], width, "Non-Capturing Demo")

    def dispose(self) -> None:
        if self.ticker is not None:
            self.ticker.stop()
            self.ticker = None
        if self.timer_handle is not None:
            self.timer_handle.hide()
            self.timer_handle = None


@dataclass
class PanelSpec:
    label: str
    colour: str
    options: OverlayOptions


FOCUS_PANELS = [
    PanelSpec("Alpha", "error", OverlayOptions(row=2, col=4, width=34, non_capturing=True)),
    PanelSpec("Beta", "success", OverlayOptions(row=5, col=28, width=34, non_capturing=True)),
    PanelSpec("Gamma", "accent", OverlayOptions(row=8, col=52, width=34, non_capturing=True)),
]

KEY_NAMES = {"enter": "Enter", "up": "↑", "down": "↓"}
EDIT_KEYS = {"left": "←", "right": "→", "backspace": "Backspace"}


class FocusPanel(Framed):
    """One of three overlapping panels: when focused it takes typing into its input and logs the keys it got;
    Tab/Shift+Tab pass the focus on, Escape/Ctrl+D dismiss it, Ctrl+C closes the demo."""

    def __init__(self, theme: Any, spec: PanelSpec, controller: FocusDemo) -> None:
        super().__init__(theme)
        self.label, self.colour, self.controller = spec.label, spec.colour, controller
        self.focused = False  # set by the host
        self.closed = False
        self.input = Input()
        self.keys: list[str] = []

    def handle_input(self, data: str) -> None:
        if matches_key(data, "tab"):
            self.controller.focus_next(self, 1)
        elif matches_key(data, "shift+tab"):
            self.controller.focus_next(self, -1)
        elif matches_key(data, "escape") or matches_key(data, "ctrl+d"):
            self.controller.dismiss(self)
        elif matches_key(data, "ctrl+c"):
            self.controller.close()
        elif name := next((n for n in KEY_NAMES if matches_key(data, n)), None):
            self.keys.append(KEY_NAMES[name])
        else:
            edit = next((n for n in EDIT_KEYS if matches_key(data, n)), None)
            self.input.handle_input(data)
            self.keys.append(EDIT_KEYS[edit] if edit else json.dumps(data, ensure_ascii=False))

    def render(self, width: int) -> list[str]:
        th, inner = self.theme, max(1, width - 2)
        self.input.focused = self.focused
        line = (self.input.render(max(1, inner - 8)) or [""])[0]
        state = th.fg("success", "FOCUSED") if self.focused else th.fg("dim", "visible")
        recent = " ".join(self.keys[-6:]) if self.keys else "(none)"
        return self.framed([f" {th.fg(self.colour, self.label)} {state}", "", f" Input: {line}", f" Keys: {recent}",
                            th.fg("dim", " Tab/Shift+Tab focus"), th.fg("dim", " Esc/Ctrl+D dismiss")], width,
                           self.colour if self.focused else "dim")


@dataclass
class Entry:
    panel: FocusPanel
    handle: OverlayHandle


class FocusDemo(Framed):
    """Opens the three panels as non-capturing overlays and moves the keyboard between them with their handles;
    it names who has the focus. Tab here focuses the first open panel; Escape/Ctrl+C closes everything."""

    def __init__(self, tui: Any, theme: Any, done: Callable[[Any], None]) -> None:
        super().__init__(theme)
        self.tui, self.done = tui, done
        self.closed = False
        self.entries = []
        for spec in FOCUS_PANELS:
            panel = FocusPanel(theme, spec, self)
            self.entries.append(Entry(panel, tui.show_overlay(panel, spec.options)))
        self._focus_first()

    def open_entries(self) -> list[Entry]:
        return [entry for entry in self.entries if not entry.panel.closed]

    def focus_next(self, current: FocusPanel, step: int) -> None:
        entries = self.open_entries()
        at = next(i for i, entry in enumerate(entries) if entry.panel is current)
        self._focus(entries[(at + step) % len(entries)])

    def dismiss(self, panel: FocusPanel) -> None:
        entries = self.open_entries()
        at = next((i for i, entry in enumerate(entries) if entry.panel is panel), None)
        if at is None:
            return
        panel.closed = True
        entries[at].handle.hide()
        rest = [entry for entry in entries if entry.panel is not panel]
        if not rest:
            self.close()
        else:
            self._focus(rest[at % len(rest)])

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self._hide_all()
            self.done(None)

    def handle_input(self, data: str) -> None:
        if closes(data):
            self.close()
        elif matches_key(data, "tab"):
            self._focus_first()

    def render(self, width: int) -> list[str]:
        th = self.theme
        focused = next((e.panel.label for e in self.entries if e.handle.is_focused()), "Controller")
        return self.box(["", f" Current focus: {th.fg('accent', focused)}", "", " Three overlapping panels above are",
                         f" {th.fg('accent', 'nonCapturing')} overlays controlled with",
                         " raw OverlayHandle.focus()/hide().", "", " Type in the focused panel's input.",
                         " Focused panel renders on top.", "", th.fg("dim", " Tab/Shift+Tab = cycle panels"),
                         th.fg("dim", " Esc/Ctrl+D = dismiss panel"), th.fg("dim", " Ctrl+C = close all"), ""],
                        width, "Focus + Input Demo")

    def dispose(self) -> None:
        if not self.closed:
            self.closed = True
            self._hide_all()

    def _focus_first(self) -> None:
        entries = self.open_entries()
        if entries:
            self._focus(entries[0])

    def _focus(self, entry: Entry) -> None:
        entry.handle.focus()
        self.tui.request_render()

    def _hide_all(self) -> None:
        for entry in self.entries:
            if not entry.panel.closed:
                entry.panel.closed = True
                entry.handle.hide()
        self.entries = []


class StreamInputPanel(Framed):
    """A non-capturing input panel: shows whether its handle has the focus and what was typed into it."""

    def __init__(self, theme: Any, label: str, colour: str, on_tab: Callable[[], None],
                 on_close: Callable[[], None]) -> None:
        super().__init__(theme)
        self.label, self.colour, self.on_tab, self.on_close = label, colour, on_tab, on_close
        self.handle: OverlayHandle | None = None
        self.typed = ""

    def handle_input(self, data: str) -> None:
        if matches_key(data, "tab"):
            self.on_tab()
        elif closes(data):
            self.on_close()
        elif matches_key(data, "backspace"):
            self.typed = self.typed[:-1]
        elif printable(data):
            self.typed += data

    def render(self, width: int) -> list[str]:
        th = self.theme
        focused = self.handle is not None and self.handle.is_focused()
        state = ([th.fg("success", " ● FOCUSED"), th.fg("dim", " (receiving input)")] if focused
                 else [th.fg("dim", " ○ unfocused"), ""])
        shown = self.typed or th.fg("dim", "(type here)")
        rows = [f" {th.fg('accent', self.label)}", "", *state, f" > {shown}", "", th.fg("dim", " Tab | Esc")]
        return self.framed(rows, width, self.colour)


class StreamingDemo(Framed):
    """A log that gains a line every half second, with three input panels on the left; Tab walks the focus
    Controller -> Panel A -> B -> C -> Controller through the panels' handles."""

    def __init__(self, tui: Any, theme: Any, done: Callable[[Any], None]) -> None:
        super().__init__(theme)
        self.tui, self.done = tui, done
        self.focus_index = -1  # -1: this panel; 0-2: one of the input panels
        self.log: list[str] = []
        self.count = 0
        self.panels: list[StreamInputPanel] = []
        for i, (label, colour) in enumerate([("Panel A", "error"), ("Panel B", "success"), ("Panel C", "accent")]):
            panel = StreamInputPanel(theme, label, colour, self.cycle_focus, self.close)
            panel.handle = tui.show_overlay(panel, OverlayOptions(non_capturing=True, row=1 + i * 9, col=2, width=35))
            self.panels.append(panel)
        self.ticker: Interval | None = Interval(0.5, self._stream)

    def _stream(self) -> None:
        self.count += 1
        self.log = [*self.log, f"[{time.strftime('%H:%M:%S')}] Streaming line {self.count}..."][-8:]
        self.tui.request_render()

    def _handle(self, index: int) -> OverlayHandle | None:
        return self.panels[index].handle if 0 <= index < len(self.panels) else None

    def cycle_focus(self) -> None:
        current = self._handle(self.focus_index)
        if current is not None:
            current.unfocus()
        self.focus_index = self.focus_index + 1 if self.focus_index + 1 < len(self.panels) else -1
        following = self._handle(self.focus_index)
        if following is not None:
            following.focus()
        self.tui.request_render()

    def close(self) -> None:
        if self.ticker is not None:
            self.ticker.stop()
            self.ticker = None
        for panel in self.panels:
            if panel.handle is not None:
                panel.handle.hide()
        self.panels = []
        self.done(None)

    def handle_input(self, data: str) -> None:
        if closes(data):
            self.close()
        elif matches_key(data, "tab"):
            self.cycle_focus()

    def render(self, width: int) -> list[str]:
        th = self.theme
        who = (th.fg("success", "Controller (this panel)") if self.focus_index < 0
               else self.panels[self.focus_index].label if self.focus_index < len(self.panels) else "?")
        rule = th.fg("dim", " ─" * ((width - 2) // 2))
        rows = ["", f" Current focus: {th.fg('accent', who)}", "", " Simulated streaming output:", rule]
        rows += [f" {th.fg('dim', line)}" for line in self.log]
        rows += [""] * (12 - len(rows))
        rows += [rule, "", f" Three {th.fg('accent', 'nonCapturing')} input panels on the left.",
                 " Tab cycles: Controller → Panel A → B → C → Controller",
                 " Type in each panel to test input routing.", "",
                 th.fg("dim", " Tab = cycle focus | Esc = close all"), ""]
        return self.box(rows, width, "Streaming + Input Test")

    def dispose(self) -> None:
        if self.ticker is not None or self.panels:
            self.close()


async def overlay_passive(args: str, ctx: CommandContext) -> None:
    ctx.ui.set_editor_text("")
    await ctx.ui.custom(lambda tui, theme, kb, done: PassiveDemo(tui, theme, done), overlay=True,
                        overlay_options=OverlayOptions(anchor="center", width=48))


async def overlay_focus(args: str, ctx: CommandContext) -> None:
    ctx.ui.set_editor_text("")
    await ctx.ui.custom(lambda tui, theme, kb, done: FocusDemo(tui, theme, done), overlay=True,
                        overlay_options=OverlayOptions(anchor="bottom-center", width=55, margin={"bottom": 1}))


async def overlay_streaming(args: str, ctx: CommandContext) -> None:
    ctx.ui.set_editor_text("")
    await ctx.ui.custom(lambda tui, theme, kb, done: StreamingDemo(tui, theme, done), overlay=True,
                        overlay_options=OverlayOptions(anchor="bottom-center", width=60, margin={"bottom": 1}))
