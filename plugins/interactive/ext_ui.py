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

    def __repr__(self) -> str:
        return "InteractiveUI()"


def install(app: InteractiveApp) -> None:
    """Give the session's plugins this UI."""
    app.session.set_ui(InteractiveUI(app))
