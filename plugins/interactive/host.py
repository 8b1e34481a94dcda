"""The interactive app as its own parts see it: ``AppHost``, and the small records its state is made of.

``InteractiveApp`` (app.py) builds the parts and is the one ``AppHost``; the modules that act for it (keys,
prompting, the screen layout, transcript, lifecycle, ``ctx.ui``, completion, attachments, text dialogs) type
against this protocol, never against the app, so that no part imports the app that imports it. Slash commands
see less (``commands.CommandUI``). The parts ``AppHost`` is built from (the scrollback, the component hosting,
the chat view, the shell job, the footer's data) name what little they use of the app themselves.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from pi_plugins.interactive.commands import CommandUI

if TYPE_CHECKING:
    from pi_plugins.interactive.chrome import FooterData, PluginChrome
    from pi_plugins.interactive.commands import MenuCommand
    from pi_plugins.interactive.custom_render import EntryWatcher
    from pi_plugins.interactive.header import StartupInfo
    from pi_plugins.interactive.hosting import KeyRouter, OverlayStack, Tui
    from pi_plugins.interactive.panel import Panel
    from pi_plugins.interactive.preload import Preloader
    from pi_plugins.interactive.scrollback import Scrollback
    from pi_plugins.interactive.shell import ShellJob
    from pi_plugins.interactive.style import ThemeWatcher
    from prompt_toolkit.application import Application
    from prompt_toolkit.document import Document
    from rich.console import Console

    from pi_core.mode import ModeRequest
    from pi_core.resources.themes import Theme
    from pi_core.session import AgentSession
    from pi_core.types import ImageContent


@dataclass
class TextDialog:
    """A plugin's ``ui.editor`` while it is open: the editor holds its text meanwhile."""

    title: str
    answer: asyncio.Future[str | None]
    draft: Document  # what the user was writing, back in the editor when the dialog closes


@dataclass
class Attachment:
    """An image waiting above the editor as a chip; it goes with the next message."""

    label: str  # "[Image #1]" or the file name
    image: ImageContent


class AppHost(CommandUI, Protocol):
    # the prompt_toolkit application and what the app is built from
    app: Application[int]
    scrollback: Scrollback
    console: Console  # rich, writing to the terminal (fullscreen mode's exit output)
    overlays: OverlayStack
    router: KeyRouter  # keys from the terminal, before the key bindings
    tui: Tui  # what plugins' component factories get
    chrome: PluginChrome  # what plugins put around the editor
    footer_data: FooterData
    entries: EntryWatcher  # custom entries drawn as they are appended
    preloader: Preloader
    theme_watcher: ThemeWatcher
    commands: dict[str, MenuCommand]
    startup: ModeRequest[AgentSession] | None  # what the CLI handed the mode (its warnings, resources and args)
    header: StartupInfo | None
    quiet_startup: bool
    startup_notes: list[str]  # problems found while starting, shown after the header
    # what is going on
    running: bool  # the prompt_toolkit app is on screen
    busy: bool  # a prompt is being answered
    run_ended: bool  # agent_end came; the prompt's call has not returned yet
    started_at: float
    hint: str | None
    version: int  # bumped by every change the live part shows
    exit_code: int
    tasks: set[asyncio.Task[Any]]
    asked: asyncio.Event  # a plugin opened a question or component (start-up stops waiting)
    panel: Panel | None  # shown in place of the editor
    text_dialog: TextDialog | None
    attachments: list[Attachment]
    shell_job: ShellJob | None
    last_ctrl_c: float  # when the last of a double press came
    last_escape: float
    unsubscribe: Callable[[], None]  # from the session's events

    def width(self) -> int: ...
    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]: ...  # a failure is shown
    def panel_done(self, value: Any) -> None: ...  # the open panel's answer
    def apply_theme(self, theme: Theme) -> None: ...
    def toggle_tool_output(self) -> None: ...
    def clear_editor(self) -> None: ...
    def session_started(self) -> None: ...  # the plugins' session_start returned
    def release_intro(self) -> None: ...
