"""The interactive UI as plugins see it (``ctx.ui``): questions become pickers, notices go to the chat."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any, Literal

from pi_plugins.interactive import attachments, style
from pi_plugins.interactive.hosting import ComponentPanel, dispose
from pi_plugins.interactive.pickers import PickItem

from pi_core.resources.ansi_theme import AnsiTheme
from pi_core.ui import (
    UI,
    AutocompleteProvider,
    ComponentFactory,
    OverlayHandle,
    OverlayOptions,
    Theme,
    ThemeInfo,
    ThemeResult,
    WidgetPlacement,
    WorkingIndicator,
    within,
)

if TYPE_CHECKING:
    from pi_plugins.interactive.host import AppHost
    from prompt_toolkit.buffer import Buffer

    from pi_core.signals import AbortSignal

LEVEL_STYLES = {"info": "cyan", "warning": "yellow", "error": "red"}


def theme_for_plugins() -> AnsiTheme:
    """``ctx.ui.theme``: the theme in force, followed when the user switches (``/theme``)."""
    return AnsiTheme(style.current)


class PromptEditor:
    """pi's editor as the host of a plugin's ``CustomEditor`` (``pi_core.tui.EditorHost``): the keys it passes on
    go to prompt_toolkit, and its lines are drawn like pi's."""

    def __init__(self, buffer: Buffer, pass_on: Callable[[str], None]) -> None:
        self.buffer = buffer
        self.default_input = pass_on

    def get_text(self) -> str:
        return self.buffer.text

    def set_text(self, text: str) -> None:
        from prompt_toolkit.document import Document

        self.buffer.set_document(Document(text, len(text)), bypass_readonly=True)

    def default_render(self, width: int, border: Callable[[str], str] | None = None) -> list[str]:
        """A rule, the text wrapped at ``width`` with the cursor in reverse video, a rule."""
        from prompt_toolkit.utils import get_cwidth

        if border is None:
            border = partial(theme_for_plugins().fg, "borderMuted")
        document = self.buffer.document
        row, col = document.cursor_position_row, document.cursor_position_col
        body: list[str] = []
        for index, line in enumerate(document.lines):
            chars = list(line)
            if index == row:
                under = chars[col] if col < len(chars) else " "
                chars = chars[:col] + [f"\x1b[7m{under}\x1b[27m"] + chars[col + 1:]
            current, used = "", 0
            for char in chars:
                cells = get_cwidth(char) if not char.startswith("\x1b") else 1
                if used + cells > width:
                    body.append(current)
                    current, used = "", 0
                current += char
                used += cells
            body.append(current)
        return [border("─" * width), *body, border("─" * width)]


class InteractiveUI(UI):
    has_ui = True

    def __init__(self, app: AppHost) -> None:
        super().__init__(theme_for_plugins())
        self.app = app

    async def select(self, title: str, options: list[str], *, timeout: float | None = None,
                     signal: AbortSignal | None = None) -> str | None:
        return await within(self.app.pick(title, [PickItem(o, o) for o in options], timeout=timeout), None,
                            timeout=timeout, signal=signal)

    async def confirm(self, title: str, message: str = "", *, timeout: float | None = None,
                      signal: AbortSignal | None = None) -> bool:
        heading = f"{title}\n{message}" if message else title
        answer = await within(self.app.pick(heading, [PickItem("Yes", True), PickItem("No", False)],
                                            timeout=timeout), None, timeout=timeout, signal=signal)
        return answer is True

    async def input(self, title: str, placeholder: str = "", *, timeout: float | None = None,
                    signal: AbortSignal | None = None) -> str | None:
        return await within(self.app.ask(title, placeholder, timeout=timeout), None, timeout=timeout, signal=signal)

    async def editor(self, title: str, prefill: str = "") -> str | None:
        from pi_plugins.interactive import text_dialog

        return await text_dialog.edit(self.app, title, prefill)

    def notify(self, message: str, level: Literal["info", "warning", "error"] = "info") -> None:
        self.app.notify(message, LEVEL_STYLES.get(level, "cyan"))

    def set_status(self, key: str, text: str | None = None) -> None:
        if text is None:
            self.app.chrome.statuses.pop(key, None)
        else:
            self.app.chrome.statuses[key] = text
        self.app.invalidate()

    def set_editor_text(self, text: str) -> None:
        self.app.set_editor_text(text)

    def get_editor_text(self) -> str:
        return self.app.buffer.text

    def paste_to_editor(self, text: str) -> None:
        """As if the user pasted ``text`` (an image path becomes an attachment)."""
        attachments.paste_text(self.app, text)

    def set_title(self, title: str) -> None:
        """The terminal window's title (OSC 0)."""
        clean = "".join(ch for ch in title if ch.isprintable())
        output = self.app.app.output
        output.write_raw(f"\x1b]0;{clean}\x07")
        output.flush()

    def set_working_message(self, text: str | None = None) -> None:
        self.app.chrome.working_message = text or "Working…"
        self.app.invalidate()

    def set_working_visible(self, visible: bool) -> None:
        self.app.chrome.working_visible = bool(visible)
        self.app.invalidate()

    def set_hidden_thinking_label(self, label: str | None = None) -> None:
        self.app.view.hidden_thinking_label = label or "Thinking… (ctrl+t to show)"
        self.app.invalidate()

    def set_widget(self, key: str, lines: list[str] | ComponentFactory | None,
                   placement: WidgetPlacement = "aboveEditor") -> None:
        """Rows (ANSI kept) above or below the editor under ``key``; None removes them."""
        if placement not in ("aboveEditor", "belowEditor"):
            raise ValueError(f'placement must be "aboveEditor" or "belowEditor", not {placement!r}')
        widgets = self.app.chrome.widgets
        for rows in widgets.values():
            old = rows.pop(key, None)
            if old is not None and not isinstance(old, list):
                dispose(old)
        if callable(lines):
            widgets[placement][key] = lines(self.app.tui, self.theme)
        elif lines is not None:
            widgets[placement][key] = [str(line) for line in lines]
        self.app.invalidate()

    async def custom(self, factory: ComponentFactory, *, overlay: bool = False,
                     overlay_options: OverlayOptions | Callable[[], OverlayOptions] | None = None,
                     on_handle: Callable[[OverlayHandle], None] | None = None) -> Any:
        """The component ``factory(tui, theme, keybindings, done)`` makes, with the keyboard, until ``done(value)``.

        Inline it takes the editor's place; as an overlay it floats over the screen (``overlay_options``)."""
        app = self.app
        answer: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

        def done(value: Any = None) -> None:
            if not answer.done():
                answer.set_result(value)
            if not overlay:
                app.panel_done(value)

        component = factory(app.tui, self.theme, app.keybindings, done)
        if inspect.isawaitable(component):
            component = await component
        if overlay:
            if answer.done():  # done() already called by the factory: never shown
                dispose(component)
                return answer.result()
            options = overlay_options() if callable(overlay_options) else overlay_options
            handle = app.overlays.open(component, options)
            if on_handle is not None:
                on_handle(handle)
            try:
                return await answer
            finally:
                handle.hide()
        if answer.done():  # done() already called by the factory
            dispose(component)
            return answer.result()
        if hasattr(component, "focused") and app.overlays.focus is None:  # it has the keyboard (Pi's Focusable)
            component.focused = True
        try:
            return await app.open_panel(ComponentPanel(component))
        finally:
            dispose(component)

    def set_working_indicator(self, indicator: WorkingIndicator | None = None) -> None:
        if indicator is not None and not isinstance(indicator, WorkingIndicator):
            frames = getattr(indicator, "frames", None)
            if frames is None and isinstance(indicator, dict):
                frames = indicator.get("frames")
                interval = indicator.get("interval_ms", indicator.get("intervalMs", 80))
            else:
                interval = getattr(indicator, "interval_ms", 80)
            indicator = WorkingIndicator([str(f) for f in frames or []], int(interval))
        self.app.chrome.working_indicator = indicator
        self.app.invalidate()

    def set_footer(self, factory: ComponentFactory | None) -> None:
        chrome = self.app.chrome
        if chrome.footer is not None:
            dispose(chrome.footer)
        chrome.footer = None if factory is None else factory(self.app.tui, self.theme, self.app.footer_data)
        self.app.invalidate()

    def set_header(self, factory: ComponentFactory | None) -> None:
        """A header set in ``pi_session_start`` is drawn at start-up; later, the screen is drawn again with it."""
        chrome = self.app.chrome
        if chrome.header is not None:
            dispose(chrome.header)
        chrome.header = None if factory is None else factory(self.app.tui, self.theme)
        if self.app.scrollback.intro is None:
            self.app.redraw_transcript()

    def set_editor_component(self, factory: ComponentFactory | None) -> None:
        """A plugin's editor in place of pi's (None: pi's again); pi's editing and drawing are its host."""
        chrome = self.app.chrome
        if chrome.editor is not None:
            dispose(chrome.editor)
        chrome.editor_factory, chrome.editor = factory, None
        if factory is not None:
            editor = factory(self.app.tui, self.theme, self.app.keybindings)
            editor.host = PromptEditor(self.app.buffer, self.app.router.pass_on)
            chrome.editor = editor
        self.app.invalidate()

    def get_editor_component(self) -> ComponentFactory | None:
        return self.app.chrome.editor_factory

    def add_autocomplete_provider(self, factory: Callable[[AutocompleteProvider], AutocompleteProvider]) -> None:
        from pi_plugins.interactive.completion import builtin_provider

        chrome = self.app.chrome
        chrome.autocomplete = factory(chrome.autocomplete or builtin_provider(self.app))

    def on_terminal_input(self, handler: Callable[[str], Any]) -> Callable[[], None]:
        handlers = self.app.router.handlers
        handlers.append(handler)

        def unsubscribe() -> None:
            if handler in handlers:
                handlers.remove(handler)

        return unsubscribe

    def get_all_themes(self) -> list[ThemeInfo]:
        return [ThemeInfo(t.name, str(t.path) if t.path else None) for t in self.app.themes.themes.values()]

    def get_theme(self, name: str) -> Theme | None:
        theme = self.app.themes.themes.get(name)
        return AnsiTheme(theme) if theme is not None else None

    def set_theme(self, theme: str | Theme) -> ThemeResult:
        from pi_core.resources.themes import Theme as ThemeData

        if isinstance(theme, str):
            found = self.app.themes.themes.get(theme)
            if found is None:
                return ThemeResult(False, f"Theme not found: {theme}")
            self.app.apply_theme(found)
            settings = self.app.session.settings
            if settings is not None and settings.get("theme") != theme:  # as Pi: a theme chosen by name is kept
                settings.set("theme", theme, "global")
            return ThemeResult(True)
        data = getattr(theme, "theme", theme)
        if not isinstance(data, ThemeData):
            return ThemeResult(False, "Not a theme")
        self.app.apply_theme(data)
        return ThemeResult(True)

    def get_tools_expanded(self) -> bool:
        return bool(self.app.view.expanded)

    def set_tools_expanded(self, expanded: bool) -> None:
        if bool(expanded) != self.app.view.expanded:
            self.app.toggle_tool_output()

    def __repr__(self) -> str:
        return "InteractiveUI()"


def install(app: AppHost) -> None:
    """Give the session's plugins this UI."""
    app.session.set_ui(InteractiveUI(app), "interactive")
