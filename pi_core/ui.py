"""``ctx.ui``: what a plugin can ask of the user and show them, in every mode (notes: docs/plugins.md#asking-the-user).

``UI`` itself is the no-UI behaviour of print and JSON mode: dialogs answer their default at once
(``has_ui`` is False, so a permission plugin knows nobody can answer), everything visual is a documented
no-op. RPC mode (``pi_core.modes.rpc.ui.RpcUI``) sends dialogs, notices, statuses, widgets, titles and editor
text to the client; the interactive UI implements every method. Dialog ``timeout`` is in seconds everywhere
(RPC puts milliseconds on the wire); a ``signal`` that fires, a cancel or a timeout give the default.

The component protocols below are what ``custom``, widget, header, footer and editor factories return;
``pi_core.tui`` (the interactive side) provides ready components implementing them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar

if TYPE_CHECKING:
    from pi_core.signals import AbortSignal

T = TypeVar("T")
NotifyLevel = Literal["info", "warning", "error"]
WidgetPlacement = Literal["aboveEditor", "belowEditor"]


class Component(Protocol):
    """Something drawn in the terminal: ``render(width)`` returns ANSI lines no wider than ``width``.

    Optional methods the UI calls when present: ``handle_input(key)`` (Pi's key names, see
    ``pi_core.tui.keys``), ``invalidate()`` (drop caches, e.g. after a theme change), ``dispose()``.
    """

    def render(self, width: int) -> list[str]: ...


class Theme(Protocol):
    """Colours by Pi's theme token names ("accent", "muted", "error", "success", "warning", "dim", ...)."""

    @property
    def name(self) -> str: ...

    def fg(self, color: str, text: str) -> str: ...
    def bg(self, color: str, text: str) -> str: ...
    def bold(self, text: str) -> str: ...
    def italic(self, text: str) -> str: ...
    def underline(self, text: str) -> str: ...
    def strikethrough(self, text: str) -> str: ...


class PlainTheme:
    """The theme until a mode installs a real one: text comes back uncoloured."""

    name = "plain"
    appearance: Literal["dark", "light"] = "dark"

    def fg(self, color: str, text: str) -> str:
        return text

    def bg(self, color: str, text: str) -> str:
        return text

    def bold(self, text: str) -> str:
        return text

    def italic(self, text: str) -> str:
        return text

    def underline(self, text: str) -> str:
        return text

    def strikethrough(self, text: str) -> str:
        return text


class TuiHandle(Protocol):
    """What factories get as ``tui``: redraw, the terminal size, suspend for a child that owns the terminal,
    and floating overlays."""

    def request_render(self) -> None: ...
    @property
    def size(self) -> tuple[int, int]: ...  # (columns, rows)
    def stop(self) -> None: ...
    def start(self) -> None: ...
    def show_overlay(self, component: Component, options: OverlayOptions | None = None) -> OverlayHandle: ...


class OverlayHandle(Protocol):
    """Focus moves as in Pi's TUI: ``unfocus()`` hands the keyboard to ``target``, else to the front-most
    capturing overlay or what had it before; ``hide()`` closes the overlay for good."""

    def focus(self) -> None: ...
    def unfocus(self, target: Component | None = None) -> None: ...
    def set_hidden(self, hidden: bool) -> None: ...
    def is_hidden(self) -> bool: ...
    def is_focused(self) -> bool: ...
    def hide(self) -> None: ...


class FooterData(Protocol):
    """What a custom footer can read that is not on ``ctx``: the git branch and the plugins' statuses."""

    def git_branch(self) -> str | None: ...
    def extension_statuses(self) -> dict[str, str]: ...
    def on_branch_change(self, callback: Callable[[str | None], None]) -> Callable[[], None]: ...


@dataclass(eq=False, repr=False)
class Suggestion:
    """One autocomplete suggestion: ``value`` is inserted, ``label`` and ``description`` are shown."""

    value: str
    label: str | None = None
    description: str | None = None


@dataclass(eq=False, repr=False)
class Suggestions:
    """Completions for the text before the cursor: ``prefix`` is the part they replace."""

    items: list[Suggestion]
    prefix: str


class AutocompleteProvider(Protocol):
    """Editor completions. ``get_suggestions`` returns None to let the provider below (pi's own: commands,
    ``@files``, paths) answer; the factory passed to ``add_autocomplete_provider`` receives that provider."""

    trigger_characters: list[str]

    async def get_suggestions(self, lines: list[str], line: int, col: int,
                              signal: AbortSignal | None = None) -> Suggestions | None: ...


@dataclass(eq=False, repr=False)
class WorkingIndicator:
    """The frames of the working row's indicator, shown as given (colour them yourself); ``[]`` hides it."""

    frames: list[str]
    interval_ms: int = 80


@dataclass(eq=False, repr=False)
class OverlayOptions:
    """Where an overlay floats. Sizes and positions take a number of cells or a percentage string ("50%").

    ``anchor``: center, top-left, top-center, top-right, left-center, right-center, bottom-left,
    bottom-center, bottom-right. ``visible(columns)`` may hide it on narrow terminals; a ``non_capturing``
    overlay leaves the keyboard to the editor.
    """

    anchor: str = "center"
    width: int | str | None = None
    min_width: int | None = None
    max_height: int | str | None = None
    margin: int | dict[str, int] = 0
    offset_x: int = 0
    offset_y: int = 0
    row: int | str | None = None
    col: int | str | None = None
    visible: Callable[[int], bool] | None = None
    non_capturing: bool = False


@dataclass(eq=False, repr=False)
class ThemeInfo:
    """A theme the UI can switch to, and the file it came from."""

    name: str
    path: str | None = None


@dataclass(eq=False)  # repr kept: a plugin prints what set_theme said (tests/rpc/test_extension_ui.py)
class ThemeResult:
    """What switching the theme did: ``error`` says why it failed."""

    success: bool
    error: str | None = None


ComponentFactory = Callable[..., Any]  # open: (tui, theme[, ...]) -> a plugin's own Component, duck-typed beyond render


async def within(question: Awaitable[T], default: T, *, timeout: float | None = None,
                 signal: AbortSignal | None = None) -> T:
    """Wait for a dialog's answer, or give ``default`` when ``timeout`` seconds pass or ``signal`` fires."""
    task = asyncio.ensure_future(question)
    waits: set[asyncio.Future[Any]] = {task}
    aborted: asyncio.Future[Any] | None = None
    if signal is not None:
        if signal.aborted:
            task.cancel()
            return default
        aborted = asyncio.ensure_future(signal.wait())
        waits.add(aborted)
    try:
        done, _ = await asyncio.wait(waits, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    finally:
        if aborted is not None:
            aborted.cancel()
    if task in done:
        return task.result()
    task.cancel()
    return default


class UI:
    """Asking the user. This base class is the no-UI behaviour (print and JSON mode): defaults only."""

    has_ui = False

    def __init__(self, theme: Theme | None = None) -> None:
        self.theme: Theme = theme or PlainTheme()

    # --- dialogs: the answer, or the default (None / False) on cancel, timeout or signal ---------------

    async def select(self, title: str, options: list[str], *, timeout: float | None = None,
                     signal: AbortSignal | None = None) -> str | None:
        """One of ``options``, or None."""
        return None

    async def confirm(self, title: str, message: str = "", *, timeout: float | None = None,
                      signal: AbortSignal | None = None) -> bool:
        """True for yes; False for no, cancel, timeout and no UI."""
        return False

    async def input(self, title: str, placeholder: str = "", *, timeout: float | None = None,
                    signal: AbortSignal | None = None) -> str | None:
        """One line of text, or None."""
        return None

    async def editor(self, title: str, prefill: str = "") -> str | None:
        """Multi-line text (``prefill`` to start from), or None."""
        return None

    async def custom(self, factory: ComponentFactory, *, overlay: bool = False,
                     overlay_options: OverlayOptions | None = None,
                     on_handle: Callable[[OverlayHandle], None] | None = None) -> Any:  # open: what the plugin's component passes to done()
        """Show ``factory(tui, theme, keybindings, done)`` with the keyboard until it calls ``done(value)``;
        returns that value. Inline it replaces the editor; ``overlay=True`` floats it over the screen.
        Interactive only: None elsewhere (check ``ctx.mode == "interactive"``)."""
        return None

    # --- notices and chrome ------------------------------------------------------------------------------

    def notify(self, message: str, level: NotifyLevel = "info") -> None:
        """A notice: coloured line in the interactive UI, ``notify`` request over RPC, nothing in print mode."""

    def set_status(self, key: str, text: str | None = None) -> None:
        """A footer status under ``key`` (ANSI allowed); None clears it."""

    def set_widget(self, key: str, content: list[str] | ComponentFactory | None,
                   placement: WidgetPlacement = "aboveEditor") -> None:
        """Lines or a ``factory(tui, theme) -> Component`` above/below the editor; None removes it.
        RPC carries lines only (a factory is dropped)."""

    def set_title(self, title: str) -> None:
        """The terminal window/tab title."""

    def set_working_message(self, message: str | None = None) -> None:
        """Text of the working row while a run streams; None restores pi's. Kept from run to run."""

    def set_working_visible(self, visible: bool) -> None:
        """Show or hide the working row."""

    def set_working_indicator(self, indicator: WorkingIndicator | None = None) -> None:
        """The working row's animation; None restores pi's spinner."""

    def set_hidden_thinking_label(self, label: str | None = None) -> None:
        """The label of collapsed thinking blocks; None restores pi's."""

    def set_footer(self, factory: ComponentFactory | None) -> None:
        """Replace the footer with ``factory(tui, theme, footer_data: FooterData)``; None restores pi's."""

    def set_header(self, factory: ComponentFactory | None) -> None:
        """Replace the start-up header with ``factory(tui, theme)``; None restores pi's."""

    # --- the editor --------------------------------------------------------------------------------------

    def set_editor_text(self, text: str) -> None:
        """Replace the editor's text (RPC: a ``set_editor_text`` request)."""

    def get_editor_text(self) -> str:
        return ""

    def paste_to_editor(self, text: str) -> None:
        """Insert as a paste (large pastes collapse as when the user pastes); RPC: like ``set_editor_text``."""
        self.set_editor_text(text)

    def set_editor_component(self, factory: ComponentFactory | None) -> None:
        """Replace the editor with ``factory(tui, theme, keybindings)`` (subclass ``pi_core.tui.CustomEditor``);
        None restores pi's."""

    def get_editor_component(self) -> ComponentFactory | None:
        return None

    def add_autocomplete_provider(self, factory: Callable[[AutocompleteProvider], AutocompleteProvider]) -> None:
        """Stack a provider over the current one (the factory receives it, to delegate to)."""

    def on_terminal_input(self, handler: Callable[[str], object]) -> Callable[[], None]:
        """Raw keys before the editor sees them (a handler returning True consumes the key); returns an
        unsubscribe function."""
        return lambda: None

    # --- themes and tool display -----------------------------------------------------------------------

    def get_all_themes(self) -> list[ThemeInfo]:
        return []

    def get_theme(self, name: str) -> Theme | None:
        return None

    def set_theme(self, theme: str | Theme) -> ThemeResult:
        return ThemeResult(False, "UI not available")

    def get_tools_expanded(self) -> bool:
        return False

    def set_tools_expanded(self, expanded: bool) -> None:
        """Expand or collapse tool output (Ctrl+O)."""
