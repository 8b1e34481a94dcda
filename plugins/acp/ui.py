"""The plugin UI over ACP: a plugin's select/confirm (a permission gate, a trust question) becomes a
``session/request_permission`` of the tool call it is about.

Which call that is comes from ``CURRENT_CALL``, which the update translator sets when a call starts, in the
task that then runs the call's ``pi_before_tool_call`` hooks. A question outside a tool call (a command's
confirm) gets a tool call of its own, so the client has something to show it on. Text dialogs (input,
editor) have no ACP request: they answer with their default, as with no UI. Notices go to stderr, which
clients keep as the agent's log, and between turns into the chat as well (a command's answer, ``/todos``).
"""

from __future__ import annotations

import asyncio
import re
import sys
import uuid
from collections.abc import Awaitable, Callable, Coroutine
from contextvars import ContextVar
from typing import Any, TypeVar

from pi_core.signals import AbortSignal
from pi_core.ui import UI, NotifyLevel, Theme, within

T = TypeVar("T")

CURRENT_CALL: ContextVar[str | None] = ContextVar("pi_acp_current_call", default=None)

_ALWAYS = re.compile(r"\b(always|don'?t ask|remember)\b", re.IGNORECASE)
_REJECT = re.compile(r"^\W*(no|deny|denied|reject|block|cancel|stop|abort|never|do not|don'?t)\b", re.IGNORECASE)

# (request) -> the chosen option id, or None when the client cancelled
AskPermission = Callable[[str | None, str, list[tuple[str, str, str]]], Coroutine[Any, Any, str | None]]
# The start-up UI of the session being opened now (its project-trust question), for the worker thread that
# loads the project (``asyncio.to_thread`` copies this context into it).
OPENING: ContextVar[UI | None] = ContextVar("pi_acp_opening", default=None)


def option_kind(label: str) -> str:
    """The ACP kind of a dialog option, read from its words: "No, stay" rejects, "Yes, always" allows always."""
    rejects = bool(_REJECT.search(label))
    if _ALWAYS.search(label):
        return "reject_always" if rejects else "allow_always"
    return "reject_once" if rejects else "allow_once"


class AcpUI(UI):
    """``ctx.ui`` of an ACP session."""

    has_ui = True

    def __init__(self, ask: AskPermission, loop: asyncio.AbstractEventLoop, theme: Theme | None = None, *,
                 notify: Callable[[str], None] = lambda text: None) -> None:
        super().__init__(theme)
        self._ask = ask
        self._loop = loop
        self._notify = notify
        self._closed = False

    def close(self) -> None:
        """The client is gone: every later question gets its default at once."""
        self._closed = True

    async def select(self, title: str, options: list[str], *, timeout: float | None = None,
                     signal: AbortSignal | None = None) -> str | None:
        choices = [(str(i), label, option_kind(label)) for i, label in enumerate(options)]
        chosen = await self._permission(title, choices, timeout, signal)
        return options[int(chosen)] if chosen is not None and chosen.isdigit() and int(chosen) < len(options) \
            else None

    async def confirm(self, title: str, message: str = "", *, timeout: float | None = None,
                      signal: AbortSignal | None = None) -> bool:
        question = f"{title}\n\n{message}" if message else title
        chosen = await self._permission(question, [("yes", "Yes", "allow_once"), ("no", "No", "reject_once")],
                                        timeout, signal)
        return chosen == "yes"

    async def _permission(self, title: str, choices: list[tuple[str, str, str]], timeout: float | None,
                          signal: AbortSignal | None) -> str | None:
        if self._closed or not choices or (signal is not None and signal.aborted):
            return None
        question = self._ask(CURRENT_CALL.get(), title, choices)
        asking: Awaitable[str | None] = question
        if asyncio.get_running_loop() is not self._loop:  # a worker thread's own loop (project trust at load)
            asking = asyncio.wrap_future(asyncio.run_coroutine_threadsafe(question, self._loop))
        return await within(asking, None, timeout=timeout, signal=signal)

    def notify(self, message: str, level: NotifyLevel = "info") -> None:
        sys.stderr.write(f"pi: {message}\n" if level == "info" else f"pi: {level}: {message}\n")
        sys.stderr.flush()
        self._notify(message)

    def blocking(self, awaitable: Coroutine[Any, Any, T]) -> T:
        """Ask from a worker thread (a sync tool's ``execute``) and wait for the answer."""
        return asyncio.run_coroutine_threadsafe(awaitable, self._loop).result()


def startup_ui() -> UI:
    """``Mode.startup_ui`` of the ACP mode: the editor answers while a session is being opened; before a client
    is connected (the CLI's own start-up) nobody can, and the project is decided as in any mode without a UI."""
    opening = OPENING.get()
    if opening is not None:
        return opening
    from pi_core.app.trust import stderr_ui

    return stderr_ui()


def question_id() -> str:
    return f"pi-question-{uuid.uuid4().hex[:12]}"
