"""The live part of the screen below the scrollback: reply, working row, panel, widgets, editor, footer."""

from __future__ import annotations

import functools
import io
import os
import re
import time
from typing import TYPE_CHECKING, Any

from pi_plugins.interactive import style, text_dialog
from pi_plugins.interactive.footer import footer_lines
from pi_plugins.interactive.hosting import TERMINAL_STRINGS, fragments, render_lines
from prompt_toolkit.filters import Condition
from prompt_toolkit.formatted_text import ANSI
from prompt_toolkit.layout import (
    ConditionalContainer,
    FloatContainer,
    HSplit,
    VSplit,
    Window,
)
from prompt_toolkit.layout.controls import BufferControl, FormattedTextControl
from prompt_toolkit.layout.dimension import Dimension
from prompt_toolkit.layout.menus import CompletionsMenu
from rich.console import Console

if TYPE_CHECKING:
    from pi_plugins.interactive.host import AppHost

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


def true_color(setting: Any = "auto") -> bool | None:
    """``terminal.trueColor``: ``true``/``false`` as set; ``"auto"`` is true when the terminal says it has 24-bit
    colour (COLORTERM), else None (the libraries' own detection)."""
    if isinstance(setting, bool):
        return setting
    return True if os.environ.get("COLORTERM", "").lower() in ("truecolor", "24bit") else None


def color_depth(setting: Any = "auto") -> Any:
    """prompt_toolkit's colour depth for ``terminal.trueColor``: 24-bit, 256 colours, or its own choice.
    Plugins' widgets and components often use truecolor codes."""
    from prompt_toolkit.output import ColorDepth

    depth = true_color(setting)
    return None if depth is None else ColorDepth.TRUE_COLOR if depth else ColorDepth.DEPTH_8_BIT


def scrollback_console(setting: Any = "auto") -> Console:
    """rich's console for the scrollback, in the colours ``terminal.trueColor`` asks for."""
    depth = true_color(setting)
    if depth is False:
        import sys

        return Console(highlight=False, color_system="256", file=EightBitOutput(sys.stdout),  # type: ignore[arg-type]
                       force_terminal=True)
    return Console(highlight=False, color_system="truecolor" if depth else "auto")


_RGB = re.compile(r"(?<=[\[;])([34]8);2;(\d{1,3});(\d{1,3});(\d{1,3})(?=[;m])")


@functools.lru_cache(maxsize=1024)
def _palette_index(red: int, green: int, blue: int) -> int:
    from rich.color import Color, ColorSystem

    return Color.from_rgb(red, green, blue).downgrade(ColorSystem.EIGHT_BIT).number or 0


class EightBitOutput:
    """The terminal for ``terminal.trueColor = false``: every 24-bit colour code written (the transcript's
    components and markdown render ANSI text in 24-bit) becomes its nearest of the 256 palette colours."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        if "8;2;" in text:
            text = _RGB.sub(lambda m: f"{m[1]};5;{_palette_index(*(min(255, int(v)) for v in m.groups()[1:]))}", text)
        return int(self._stream.write(text))

    def __getattr__(self, name: str) -> Any:  # flush, fileno, isatty, encoding: the terminal's own
        return getattr(self._stream, name)


class Screen:
    """Builds the app's layout and draws each of its rows from the app's state."""

    def __init__(self, app: AppHost) -> None:
        self.app = app
        self._live_cache: tuple[int, int, list[Any]] | None = None

    def forget(self) -> None:
        """Draw the live reply again on the next frame (the theme changed)."""
        self._live_cache = None

    def live_fragments(self) -> Any:
        app = self.app
        width, rows = app.width(), app.screen_rows()
        if self._live_cache is None or self._live_cache[:2] != (app.version, width):
            live = app.view.live()
            text = ""
            if live is not None:
                buffer = io.StringIO()
                Console(file=buffer, force_terminal=True, color_system="truecolor", width=width,
                        highlight=False).print(live)
                lines = buffer.getvalue().rstrip("\n").split("\n")
                keep = max(3, rows - 8)  # the tail that fits; the whole block goes to scrollback when done
                text = "\n".join(lines[-keep:])
            self._live_cache = (app.version, width, ANSI(TERMINAL_STRINGS.sub("", text)).__pt_formatted_text__())
        return self._live_cache[2]

    def widget_fragments(self, placement: str) -> Any:
        lines: list[str] = []
        for content in self.app.chrome.widgets[placement].values():
            lines += content if isinstance(content, list) else render_lines(content, self.app.width())
        return fragments(lines)

    def indicator(self) -> list[Any]:
        """The working row's animation: pi's spinner, or a plugin's frames (verbatim; none at all for [])."""
        indicator = self.app.chrome.working_indicator
        if indicator is None:
            return [(style.pt("accent"), SPINNER[int(time.monotonic() * 10) % len(SPINNER)] + " ")]
        if not indicator.frames:
            return []
        step = max(1, int(indicator.interval_ms)) / 1000
        frame = indicator.frames[int(time.monotonic() / step) % len(indicator.frames)]
        return [*fragments([frame]), ("", " ")]

    def status_fragments(self) -> Any:
        app = self.app
        if app.busy and (not app.chrome.working_visible or app.run_ended):
            return [(style.pt("muted"), app.hint or "")]
        if app.busy:
            elapsed = int(time.monotonic() - app.started_at)
            text = app.chrome.working_message  # a plugin's message may bring its own colour
            message = fragments([text]) if "\x1b" in text else [(style.pt("accent"), text)]
            return [*self.indicator(), *message, ("", " "), (style.pt("muted"), f"({elapsed}s) · esc to interrupt")]
        if app.shell_job is not None and app.shell_job.running:
            return [(style.pt("accent"), "Running shell command… "), (style.pt("muted"), "esc to cancel")]
        return [(style.pt("muted"), app.hint or "")]

    def attachment_fragments(self) -> Any:
        chips = [(f"{style.pt('accent')} reverse", f" {a.label} ") for a in self.app.attachments]
        spaced: list[tuple[str, str]] = []
        for chip in chips:
            spaced += [chip, ("", " ")]
        return spaced

    def footer_fragments(self) -> Any:
        app = self.app
        if app.chrome.footer is not None:
            return fragments(render_lines(app.chrome.footer, app.width()))
        first, second = footer_lines(app.session, app.width())
        drawn: list[Any] = [(style.pt("dim"), first + "\n" + second)]
        statuses = app.chrome.statuses
        if statuses:  # plugins may colour their status with ANSI codes
            drawn.append(("", "\n"))
            drawn += ANSI(TERMINAL_STRINGS.sub("", " · ".join(statuses.values()))).__pt_formatted_text__()
        return drawn

    def panel_fragments(self) -> Any:
        return self.app.panel.lines(self.app.width()) if self.app.panel else []

    def custom_editor_fragments(self) -> Any:
        editor = self.app.chrome.editor
        return fragments(render_lines(editor, self.app.width())) if editor else []

    def filler_rows(self, main: Any) -> int:
        """While an overlay is open the app takes the whole terminal (it floats over the full height)."""
        app = self.app
        if not app.running or not app.overlays.visible(app.width()):
            return 0
        rows = app.screen_rows()
        return max(0, rows - main.preferred_height(app.width(), rows).preferred)

    def build(self) -> Any:
        app = self.app
        has_live = Condition(app.view.has_live)
        live = ConditionalContainer(Window(FormattedTextControl(self.live_fragments), wrap_lines=False,
                                           dont_extend_height=True), filter=has_live)
        main = HSplit([live, *self.rows()])
        filler = Window(height=lambda: Dimension.exact(self.filler_rows(main)))
        return FloatContainer(HSplit([filler, main]), floats=app.overlays.floats)

    def rows(self) -> list[Any]:
        """Everything below the live reply: working row, panel, widgets, editor, completions, footer."""
        from pi_plugins.interactive.editor import DrawnCursor

        app = self.app
        picking = Condition(lambda: app.panel is not None)

        def rule() -> Window:
            return Window(height=1, char="─", style=lambda: style.pt("borderMuted"))

        padding = max(0, min(3, int(app.setting("editorPaddingX", 0) or 0)))
        hardware_cursor = app.setting("showHardwareCursor", False) is True
        control = BufferControl(app.buffer, input_processors=[] if hardware_cursor else [DrawnCursor()])
        text = Window(control, wrap_lines=True, height=Dimension(min=1, max=12), dont_extend_height=True,
                      always_hide_cursor=not hardware_cursor)
        row = VSplit([Window(width=padding), text, Window(width=padding)]) if padding else text
        has_chips = Condition(lambda: bool(app.attachments))
        dialog = Condition(lambda: app.text_dialog is not None)
        custom_editor = Condition(lambda: app.chrome.editor is not None) & ~dialog
        editor = HSplit([
            ConditionalContainer(Window(FormattedTextControl(lambda: text_dialog.title_fragments(app)),
                                        dont_extend_height=True), filter=dialog),
            rule(), ConditionalContainer(Window(FormattedTextControl(self.attachment_fragments), height=1),
                                         filter=has_chips), row, rule(),
            ConditionalContainer(Window(FormattedTextControl(lambda: text_dialog.hint_fragments(app)), height=1),
                                 filter=dialog)])
        return [
            Window(FormattedTextControl(self.status_fragments), height=1),
            ConditionalContainer(Window(FormattedTextControl(self.panel_fragments), dont_extend_height=True),
                                 filter=picking),
            ConditionalContainer(Window(FormattedTextControl(lambda: self.widget_fragments("aboveEditor")),
                                        dont_extend_height=True),
                                 filter=Condition(lambda: bool(app.chrome.widgets["aboveEditor"]))),
            ConditionalContainer(editor, filter=~picking & ~custom_editor),
            ConditionalContainer(Window(FormattedTextControl(self.custom_editor_fragments), dont_extend_height=True),
                                 filter=~picking & custom_editor),
            ConditionalContainer(Window(FormattedTextControl(lambda: self.widget_fragments("belowEditor")),
                                        dont_extend_height=True),
                                 filter=Condition(lambda: bool(app.chrome.widgets["belowEditor"]))),
            CompletionsMenu(max_height=max(3, min(20, int(app.setting("autocompleteMaxVisible", 5) or 5))),
                            scroll_offset=1),
            Window(FormattedTextControl(self.footer_fragments), dont_extend_height=True),
        ]
