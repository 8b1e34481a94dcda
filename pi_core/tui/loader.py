"""Progress while something runs: ``Loader`` (spinner + message), ``CancellableLoader`` (Escape aborts its
``signal``) and ``BorderedLoader`` (the framed, cancellable loader of handoff/qna-style commands)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pi_core.signals import AbortSignal
from pi_core.tui.components import Container, DynamicBorder, Spacer, Text
from pi_core.tui.keys import KeyMatcher, as_keybindings, key_hint
from pi_core.ui import WorkingIndicator

if TYPE_CHECKING:
    from pi_core.ui import Theme, TuiHandle

SPINNER_FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"]
INTERVAL_MS = 80
Style = Callable[[str], str]


class Loader(Text):
    """A blank line, then ``<frame> <message>``. The frame advances every ``interval_ms`` while an asyncio
    loop runs (``start()`` is called for you), asking ``tui.request_render()`` each time; ``stop()`` ends it.
    A custom ``indicator`` is drawn verbatim (not coloured); ``[]`` frames draw the message alone."""

    def __init__(self, tui: TuiHandle | None = None, spinner_style: Style | None = None,
                 message_style: Style | None = None, message: str = "Loading...",
                 indicator: WorkingIndicator | None = None) -> None:
        super().__init__("", 1, 0)
        self.tui = tui
        self.spinner_style = spinner_style or (lambda s: s)
        self.message_style = message_style or (lambda s: s)
        self.message = message
        self.frame = 0
        self._task: asyncio.Task[None] | None = None
        self.set_indicator(indicator)

    def set_indicator(self, indicator: WorkingIndicator | None) -> None:
        self.verbatim = indicator is not None
        self.frames = list(indicator.frames) if indicator is not None else list(SPINNER_FRAMES)
        self.interval_ms = indicator.interval_ms if indicator is not None and indicator.interval_ms > 0 else INTERVAL_MS
        self.frame = 0
        self.start()

    def set_message(self, message: str) -> None:
        self.message = message
        self._update()

    def start(self) -> None:
        self._update()
        self.stop()
        if len(self.frames) <= 1:
            return
        with contextlib.suppress(RuntimeError):  # no running loop: a still frame
            self._task = asyncio.get_running_loop().create_task(self._spin())

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            self._task = None

    def dispose(self) -> None:
        self.stop()

    def tick(self) -> None:
        """Show the next frame."""
        if self.frames:
            self.frame = (self.frame + 1) % len(self.frames)
        self._update()

    async def _spin(self) -> None:
        while True:
            await asyncio.sleep(self.interval_ms / 1000)
            self.tick()

    def _update(self) -> None:
        frame = self.frames[self.frame] if self.frames else ""
        shown = frame if self.verbatim else self.spinner_style(frame)
        self.set_text((f"{shown} " if frame else "") + self.message_style(self.message))
        request = getattr(self.tui, "request_render", None)
        if callable(request):
            request()

    def invalidate(self) -> None:
        super().invalidate()
        self._update()

    def render(self, width: int) -> list[str]:
        return ["", *super().render(width)]


class CancellableLoader(Loader):
    """A loader whose ``signal`` fires when the user presses Escape (``tui.select.cancel``); ``on_abort``
    is called then too. Pass ``loader.signal`` to the work (``ctx.model_registry.complete(..., signal=)``)."""

    def __init__(self, tui: TuiHandle | None = None, spinner_style: Style | None = None,
                 message_style: Style | None = None, message: str = "Loading...",
                 indicator: WorkingIndicator | None = None, *, keybindings: KeyMatcher | None = None) -> None:
        self.signal = AbortSignal()
        self.on_abort: Callable[[], Any] | None = None
        self.keybindings = as_keybindings(keybindings)
        super().__init__(tui, spinner_style, message_style, message, indicator)

    @property
    def aborted(self) -> bool:
        return self.signal.aborted

    def handle_input(self, data: str) -> None:
        if self.keybindings.matches(data, "tui.select.cancel"):
            self.signal.abort()
            if self.on_abort is not None:
                self.on_abort()


class BorderedLoader(Container):
    """A loader between two rules, with a cancel hint when ``cancellable`` (Escape aborts ``signal``)."""

    def __init__(self, tui: TuiHandle | None, theme: Theme, message: str, *, cancellable: bool = True,
                 keybindings: KeyMatcher | None = None) -> None:
        super().__init__()
        self.cancellable = cancellable
        border = DynamicBorder(lambda s: theme.fg("border", s))
        accent: Style = lambda s: theme.fg("accent", s)
        muted: Style = lambda s: theme.fg("muted", s)
        self.loader: Loader = (CancellableLoader(tui, accent, muted, message, keybindings=keybindings)
                               if cancellable else Loader(tui, accent, muted, message))
        self._signal = self.loader.signal if isinstance(self.loader, CancellableLoader) else AbortSignal()
        self.add_child(border)
        self.add_child(self.loader)
        if cancellable:
            self.add_child(Spacer(1))
            self.add_child(Text(key_hint("tui.select.cancel", "cancel", theme, keybindings), 1, 0))
        self.add_child(Spacer(1))
        self.add_child(DynamicBorder(lambda s: theme.fg("border", s)))

    @property
    def signal(self) -> AbortSignal:
        return self._signal

    @property
    def on_abort(self) -> Callable[[], object] | None:
        return self.loader.on_abort if isinstance(self.loader, CancellableLoader) else None

    @on_abort.setter
    def on_abort(self, handler: Callable[[], object] | None) -> None:
        if isinstance(self.loader, CancellableLoader):
            self.loader.on_abort = handler

    def handle_input(self, data: str) -> None:
        if isinstance(self.loader, CancellableLoader):
            self.loader.handle_input(data)

    def dispose(self) -> None:
        self.loader.stop()
