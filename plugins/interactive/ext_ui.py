"""The interactive UI as plugins see it (``ctx.ui``): questions become pickers, notices go to the chat."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Literal, TypeVar

from pi_plugins.interactive.pickers import PickItem

from pi_core.extension import UI

if TYPE_CHECKING:
    from pi_plugins.interactive.app import InteractiveApp

T = TypeVar("T")
LEVEL_STYLES = {"info": "cyan", "warning": "yellow", "error": "red"}


async def _within(question: Awaitable[T], timeout: float | None, default: T) -> T:
    if timeout is None:
        return await question
    try:
        return await asyncio.wait_for(question, timeout)
    except TimeoutError:
        return default


class InteractiveUI(UI):
    has_ui = True

    def __init__(self, app: InteractiveApp) -> None:
        self.app = app

    async def select(self, title: str, options: list[str], *, timeout: float | None = None) -> str | None:
        return await _within(self.app.pick(title, [PickItem(o, o) for o in options]), timeout, None)

    async def confirm(self, title: str, message: str = "", *, timeout: float | None = None) -> bool:
        heading = f"{title}\n{message}" if message else title
        answer = await _within(self.app.pick(heading, [PickItem("Yes", True), PickItem("No", False)]), timeout, None)
        return answer is True

    async def input(self, title: str, placeholder: str = "", *, timeout: float | None = None) -> str | None:
        return await _within(self.app.ask(title, placeholder), timeout, None)

    async def editor(self, title: str, prefill: str = "") -> str | None:
        return await self.app.ask(title, prefill=prefill)

    def notify(self, message: str, level: Literal["info", "warning", "error"] = "info") -> None:
        self.app.notify(message, LEVEL_STYLES.get(level, "cyan"))

    def set_status(self, key: str, text: str | None = None) -> None:
        if text is None:
            self.app.statuses.pop(key, None)
        else:
            self.app.statuses[key] = text
        self.app.invalidate()

    def set_editor_text(self, text: str) -> None:
        self.app.set_editor_text(text)

    def get_editor_text(self) -> str:
        return self.app.buffer.text

    def paste_to_editor(self, text: str) -> None:
        """As if the user pasted ``text`` (an image path becomes an attachment)."""
        self.app.paste_text(text)

    def set_title(self, title: str) -> None:
        """The terminal window's title (OSC 0)."""
        clean = "".join(ch for ch in title if ch.isprintable())
        output = self.app.app.output
        output.write_raw(f"\x1b]0;{clean}\x07")
        output.flush()

    def set_working_message(self, text: str | None = None) -> None:
        self.app.working_message = text or "Working…"
        self.app.invalidate()

    def set_working_visible(self, visible: bool) -> None:
        self.app.working_visible = bool(visible)
        self.app.invalidate()

    def set_hidden_thinking_label(self, label: str | None = None) -> None:
        self.app.view.hidden_thinking_label = label or "Thinking… (ctrl+t to show)"
        self.app.invalidate()

    def set_widget(self, key: str, lines: list[str] | None, placement: str = "aboveEditor") -> None:
        """Rows (ANSI kept) above or below the editor under ``key``; None removes them."""
        if placement not in ("aboveEditor", "belowEditor"):
            raise ValueError(f'placement must be "aboveEditor" or "belowEditor", not {placement!r}')
        for rows in self.app.widgets.values():
            rows.pop(key, None)
        if lines is not None:
            self.app.widgets[placement][key] = [str(line) for line in lines]
        self.app.invalidate()

    def get_tools_expanded(self) -> bool:
        return bool(self.app.view.expanded)

    def set_tools_expanded(self, expanded: bool) -> None:
        if bool(expanded) != self.app.view.expanded:
            self.app.toggle_tool_output()

    def __repr__(self) -> str:
        return "InteractiveUI()"


def install(app: InteractiveApp) -> None:
    """Give the session's plugins this UI."""
    app.session.set_ui(InteractiveUI(app))
