"""Finished output, printed in order into the terminal's scrollback above the live part of the screen."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from prompt_toolkit.application import Application
    from rich.console import Console


class Terminal(Protocol):
    """What the scrollback uses of the app (``host.AppHost`` is one)."""

    @property
    def console(self) -> Console: ...
    @property
    def app(self) -> Application[int]: ...
    @property
    def running(self) -> bool: ...
    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]: ...
    def invalidate(self) -> None: ...


class Raw:
    """Something to do at its turn in the scrollback queue instead of printing (clearing the screen)."""

    def __init__(self, action: Callable[[], None]) -> None:
        self.action = action


class Scrollback:
    """The queue of renderables waiting for the terminal; while the app runs they go out through
    ``run_in_terminal`` so prompt_toolkit redraws the live part below them."""

    def __init__(self, app: Terminal) -> None:
        self.app = app
        self.pending: list[Any] = []
        self.flushing = False
        # start-up output held until the plugins' session_start returned (None: not holding)
        self.intro: list[Any] | None = None

    def commit(self, renderable: Any) -> None:
        self.pending.append(renderable)
        if self.intro is not None:  # start-up: printed behind the header once session_start returned
            self.app.invalidate()
            return
        self._drain()
        self.app.invalidate()

    def flush(self) -> None:
        """Print what is queued now (a redraw of an empty conversation commits nothing that would)."""
        if self.intro is None and self.pending:
            self._drain()
            self.app.invalidate()

    def clear_screen(self) -> None:
        """At its turn in the queue: clear the screen and its scrollback."""
        console = self.app.console

        def clear() -> None:
            out = console.file if console.file is not sys.stdout else sys.stdout
            out.write("\x1b[3J\x1b[H\x1b[2J")
            out.flush()

        self.pending.append(Raw(clear))

    def release_intro(self, header: Callable[[], Any] | None) -> None:
        """After the plugins' session_start: the header (``header()``, unless None), then what waited behind it."""
        if self.intro is None:
            return
        intro = self.intro
        if header is not None:
            intro.insert(0, header())
        self.intro = None
        self.pending[:0] = intro
        if not self.pending:
            return
        self._drain()
        self.app.invalidate()

    def _drain(self) -> None:
        if not self.app.running:
            self.print_pending()
        elif not self.flushing:
            self.flushing = True
            self.app.spawn(self._flush())

    async def _flush(self) -> None:
        try:
            while self.pending:
                self.print_above()
                await asyncio.sleep(0)
        finally:
            self.flushing = False

    def print_above(self) -> None:
        """Print the queue above the live part, staying in raw mode. (prompt_toolkit's ``run_in_terminal`` puts
        the terminal in cooked mode meanwhile: keys typed then are echoed by the tty and an Enter arrives as
        Ctrl+J, a new line instead of a submit.)"""
        app = self.app.app
        if not app.is_running:
            self.print_pending()
            return
        app.renderer.erase()  # the live part goes; the cursor is where it began
        try:
            self.print_pending()
        finally:
            app.renderer.reset()
            app.renderer.request_absolute_cursor_position()
            app.invalidate()

    def print_pending(self) -> None:
        typeahead = sys.modules.get("pi_core.app.typeahead")  # before the app runs: above the stand-in editor
        if typeahead is not None and not self.app.app.is_running:
            with typeahead.above():
                self._print_pending()
        else:
            self._print_pending()

    def finish(self) -> None:
        """The app has ended: what is left goes out (fullscreen mode prints its exit output)."""
        self.print_pending()

    def _print_pending(self) -> None:
        items, self.pending = self.pending, []
        for renderable in items:
            if isinstance(renderable, Raw):
                renderable.action()
                continue
            self.app.console.print()
            self.app.console.print(renderable)
