"""The terminal list of ``pi config``: type to filter, Up/Down to move, Space to toggle (saved at once), Tab to
switch between the global and the project settings, Esc or Ctrl+C to close."""

from __future__ import annotations

import shutil
from typing import Any

from prompt_toolkit.application import Application
from prompt_toolkit.formatted_text import FormattedText
from prompt_toolkit.key_binding import KeyBindings
from prompt_toolkit.keys import Keys
from prompt_toolkit.layout import Layout, Window
from prompt_toolkit.layout.controls import FormattedTextControl

from pi_core.app.config_command import (
    HINTS,
    Item,
    ResourceConfig,
    _home,
    listing,
    title,
)
from pi_core.errors import PiError


class _Browser:
    def __init__(self, config: ResourceConfig) -> None:
        self.config = config
        self.all = config.items()
        self.query = ""
        self.cursor = 0
        self.status = ""

    def shown(self) -> list[Item]:
        words = self.query.lower().split()
        return [i for i in self.all if all(w in f"{i.name} {i.source} {i.group}".lower() for w in words)]

    def move(self, step: int) -> None:
        count = len(self.shown())
        self.cursor = min(max(self.cursor + step, 0), max(count - 1, 0))

    def toggle(self) -> None:
        shown = self.shown()
        if not shown:
            return
        item = shown[self.cursor]
        try:
            self.config.toggle(item)
        except PiError as err:
            self.status = str(err)
            return
        state = "on" if item.on else "off"
        self.status = f"{item.name} {state}: saved to {_home(self.config.settings_path())}; pi's next start uses it"

    def switch(self) -> None:
        try:
            self.config.switch("project" if self.config.scope == "global" else "global")
        except PiError as err:
            self.status = str(err)
            return
        self.all, self.cursor, self.status = self.config.items(), 0, ""

    def text(self) -> FormattedText:
        columns, rows = shutil.get_terminal_size()
        rule = "─" * columns
        head = title(self.config)
        lines: list[tuple[str, str]] = [
            ("fg:ansiblue", rule + "\n"),
            ("bold", head), ("", " " * max(columns - len(head) - len(HINTS), 2)), ("fg:ansibrightblack", HINTS + "\n"),
            ("fg:ansibrightblack", _home(self.config.settings_path()) + "\n\n"),
            ("", f"> {self.query}\n\n"),
        ]
        shown = self.shown()
        body = listing(shown, cursor=self.cursor)
        if not shown:
            body = [(None, "  No plugins match.")]
        room = max(rows - 10, 3)
        at = next((n for n, (index, _text) in enumerate(body) if index == self.cursor), 0)
        start = min(max(at - room // 2, 0), max(len(body) - room, 0))
        for index, line in body[start:start + room]:
            style = "fg:ansimagenta" if index is None else "reverse" if index == self.cursor else ""
            lines.append((style, line + "\n"))
        if self.status:
            lines.append(("fg:ansiyellow", "\n" + self.status + "\n"))
        lines.append(("fg:ansiblue", rule))
        return FormattedText(lines)


def browse(config: ResourceConfig) -> None:
    browser = _Browser(config)
    keys = KeyBindings()

    @keys.add("up")
    def _up(event: Any) -> None:
        browser.move(-1)

    @keys.add("down")
    def _down(event: Any) -> None:
        browser.move(1)

    @keys.add("pageup")
    def _page_up(event: Any) -> None:
        browser.move(-10)

    @keys.add("pagedown")
    def _page_down(event: Any) -> None:
        browser.move(10)

    @keys.add(" ")
    def _toggle(event: Any) -> None:
        browser.toggle()

    @keys.add("tab")
    def _switch(event: Any) -> None:
        browser.switch()

    @keys.add("backspace")
    def _erase(event: Any) -> None:
        browser.query, browser.cursor = browser.query[:-1], 0

    @keys.add(Keys.Any)
    def _type(event: Any) -> None:
        if event.data.isprintable():
            browser.query, browser.cursor = browser.query + event.data, 0

    @keys.add("escape", eager=True)
    @keys.add("c-c")
    @keys.add("c-d")
    def _close(event: Any) -> None:
        event.app.exit()

    app: Application[None] = Application(
        layout=Layout(Window(FormattedTextControl(browser.text, show_cursor=False))), key_bindings=keys,
        full_screen=False, erase_when_done=False)
    app.run()
