"""The interactive application: a prompt_toolkit app drawn below the terminal's scrollback.

Finished output goes to the scrollback through ``run_in_terminal`` (so the terminal keeps it and
the user can scroll); the app itself only holds what is still live: the streaming reply, running
tools, the working indicator, the editor (or a picker), completions and the footer.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pi_plugins.interactive import (
    display,
    keys,
    lifecycle,
    prompting,
    shell,
    style,
    transcript,
    usage_notices,
)
from pi_plugins.interactive.builtin_commands import BUILTIN_COMMANDS
from pi_plugins.interactive.chrome import FooterData, PluginChrome
from pi_plugins.interactive.commands import MenuCommand, collect_commands
from pi_plugins.interactive.completion import completing_while_typing
from pi_plugins.interactive.editor import FileIndex, make_completer
from pi_plugins.interactive.header import StartupInfo
from pi_plugins.interactive.host import Attachment, TextDialog
from pi_plugins.interactive.hosting import KeyRouter, OverlayStack, Tui
from pi_plugins.interactive.keybindings import load_keybindings
from pi_plugins.interactive.layout import Screen, color_depth, scrollback_console
from pi_plugins.interactive.panel import Panel
from pi_plugins.interactive.pickers import Picker
from pi_plugins.interactive.preload import Preloader
from pi_plugins.interactive.progress import TerminalProgress
from pi_plugins.interactive.renderers import resolve_renderers
from pi_plugins.interactive.scrollback import Scrollback
from pi_plugins.interactive.view import ChatView, render_notice
from prompt_toolkit.application import Application
from prompt_toolkit.buffer import Buffer
from prompt_toolkit.filters import Condition
from prompt_toolkit.history import InMemoryHistory
from prompt_toolkit.key_binding import DynamicKeyBindings
from prompt_toolkit.layout import Layout
from rich.console import Console

from pi_core.control.session_control import SessionControl
from pi_core.errors import PiError

if TYPE_CHECKING:
    from pi_plugins.interactive.shortcuts import PluginShortcut

    from pi_core.mode import ModeRequest
    from pi_core.resources.themes import Theme, ThemeSet
    from pi_core.session import AgentSession

STARTUP_WAIT_SECONDS = lifecycle.STARTUP_WAIT_SECONDS


def _deadline(timeout: float | None) -> float | None:
    return time.monotonic() + timeout if timeout is not None and timeout > 0 else None


class InteractiveApp:
    """The app's state and the actions keys, commands and plugins call (``host.AppHost``); each part's work is
    in its module."""

    themes: ThemeSet  # found by load_theme(), first called while the app is built

    def __init__(self, session: Any, *, startup: ModeRequest[AgentSession] | None = None, header: StartupInfo | None = None,
                 console: Console | None = None, input: Any = None, output: Any = None,
                 preloader: Preloader | None = None, quiet_startup: bool = False, tui_mode: str = "regular") -> None:
        self.session = session
        self.fullscreen = tui_mode == "fullscreen"  # the transcript in a pane on the alternate screen (fullscreen.py)
        self.running = False
        self.version = 0  # bumped by every change the live part shows
        self.tasks: set[asyncio.Task[Any]] = set()
        # first: notices may come while the rest is set up
        self.scrollback = self._transcript_pane() if self.fullscreen else Scrollback(self)
        self.control = SessionControl(session)
        self.startup = startup
        self.quiet_startup = quiet_startup
        self.header = header
        depth = session.settings.get("terminal.trueColor", "auto") if session.settings is not None else "auto"
        self.console = console or scrollback_console(depth)
        self.progress = TerminalProgress(self, session.settings is not None
                                         and session.settings.get("terminal.showTerminalProgress") is True)
        self.screen = Screen(self) if not self.fullscreen else self._fullscreen_screen()
        self.view = ChatView(resolve_renderers(dict(session.registry.renderers.items)), self.show, str(session.cwd))
        if session.settings is not None and session.settings.get("hideThinkingBlock", False) is True:
            self.view.show_thinking = False  # Ctrl+T shows it again
        self.commands: dict[str, MenuCommand] = {}
        self.startup_notes: list[str] = []  # problems found while starting (commands, keybindings, shortcuts)
        self.commands = collect_commands(BUILTIN_COMMANDS, session, session.resources, warn=self.startup_notes.append)
        self.preloader = preloader or Preloader(session)
        self.busy = False
        self.run_ended = False  # agent_end came; the prompt's call has not returned yet
        self.started_at = 0.0
        self.shell_job: shell.ShellJob | None = None
        self.panel: Panel | None = None  # a picker, /tree, /settings ... shown in place of the editor
        self._panel_future: asyncio.Future[Any] | None = None
        self.text_dialog: TextDialog | None = None  # a plugin's ui.editor: the editor holds its text meanwhile
        self.theme_notes: list[str] = []  # problems of the last theme discovery (shown at start-up)
        self.attachments: list[Attachment] = []  # images waiting in the editor as chips
        from pi_core.config_paths import agent_dir

        self.agent_dir = agent_dir()
        self.keybindings = load_keybindings(self.agent_dir)
        self.startup_notes += self.keybindings.diagnostics
        self.shortcuts: list[PluginShortcut] = []  # plugins' (pi_shortcuts), bound by keys.build
        self._collect_shortcuts()
        self.theme_watcher = style.ThemeWatcher(self._theme_reloaded, lambda text: self.notify(text, "red"))
        self.last_ctrl_c = 0.0
        self.last_escape = 0.0
        self.hint: str | None = None  # one-line notice above the editor ("press ctrl+c again...")
        self.chrome = PluginChrome()  # what plugins put around the editor (ext_ui.py)
        self.tui = Tui(self)  # what plugins' component factories get
        self.router = KeyRouter(self)
        self.overlays = OverlayStack(self, [])
        self.footer_data = FooterData(Path(session.config.cwd), self.chrome.statuses, self.invalidate)
        self.asked = asyncio.Event()  # a plugin opened a question or component (start-up stops waiting)
        self.exit_code = 0
        self.history = InMemoryHistory()
        for message in session.messages:
            if getattr(message, "role", None) == "user":
                self.history.append_string(message.text())
        self.files = FileIndex(session.config.cwd)
        self.buffer = Buffer(
            multiline=True, history=self.history,
            completer=make_completer(lambda: self.commands, session.config.cwd, self.files,
                                     lambda: self.chrome.autocomplete),
            complete_while_typing=Condition(lambda: completing_while_typing(self)),
        )
        # rebuilt on /reload and when the session is replaced; prompt_toolkit keeps the bindings it was given
        # per focused window, so a new set is only seen through this indirection
        self.bindings = self._key_bindings()
        self.app: Application[int] = Application(
            layout=Layout(self.screen.build(), focused_element=self.buffer),
            key_bindings=DynamicKeyBindings(lambda: self.bindings), full_screen=self.fullscreen, input=input, output=output,
            color_depth=color_depth(depth), mouse_support=self.fullscreen, min_redraw_interval=0.03,
            erase_when_done=False,
        )
        self.app.ttimeoutlen = 0.05
        self.app.timeoutlen = 0.3
        self.router.install(self.app.input)
        self.app.before_render += lambda app: self.overlays.arrange(self.width(), self.screen_rows())
        from pi_plugins.interactive.custom_render import CustomRenderers, EntryWatcher
        from pi_plugins.interactive.ext_ui import theme_for_plugins

        self.view.custom = CustomRenderers(session, theme_for_plugins, self.width)
        self.entries = EntryWatcher(session, self.view.custom, self.show, lambda: self.view.expanded)
        off_events, off_renewal = session.subscribe(self._on_event), session.on_plugins_renewed(self.plugins_renewed)

        def unsubscribe() -> None:
            off_events()
            off_renewal()

        self.unsubscribe = unsubscribe
        self.load_theme()
        style.code_block_indent = str(self.setting("markdown.codeBlockIndent", "  "))
        from pi_plugins.interactive import diagrams

        diagrams.mode = str(self.setting("markdown.mermaid", "streaming"))
        display.load(self.setting).cwd = str(session.cwd)
        if self.fullscreen:  # the pane's images and links, drawn over it after each frame
            from pi_plugins.interactive.fullscreen_marks import Overlay

            self.app.after_render += Overlay(self, self.screen.control).after_render  # type: ignore[attr-defined]
        else:
            display.watch_shrink(self)

    # --- commands (also the CommandUI protocol) -----------------------------------------------------

    def refresh_commands(self) -> None:
        self.commands = collect_commands(BUILTIN_COMMANDS, self.session, self.session.resources,
                                         warn=lambda text: self.notify(text, "yellow"))

    def notify(self, text: str, style: str = "dim") -> None:
        self.scrollback.commit(render_notice(text, style))

    def show(self, renderable: Any) -> None:
        self.scrollback.commit(renderable)

    def set_editor_text(self, text: str) -> None:
        from prompt_toolkit.document import Document

        self.buffer.set_document(Document(text, len(text)), bypass_readonly=True)

    def exit(self, code: int = 0) -> None:
        self.exit_code = code
        if self.app.is_running and not self.app.future.done():  # type: ignore[union-attr]
            self.app.exit(result=code)

    async def pick(self, title: str, items: list[Any], *, multi: bool = False,
                   checked: set[int] | None = None, index: int = 0, timeout: float | None = None) -> Any:
        """Show a picker in place of the editor; the chosen value, or None when cancelled.

        ``timeout`` (seconds) only counts down in the title; the caller closes the picker when it runs out."""
        return await self.open_panel(Picker(title, items, multi=multi, checked=set(checked or ()), index=index,
                                            deadline=_deadline(timeout)))

    async def ask(self, title: str, placeholder: str = "", prefill: str = "", *,
                  timeout: float | None = None) -> str | None:
        """One line of text from the user (a plugin's ``ui.input``), or None when cancelled."""
        return await self.open_panel(Picker(title, [], free_text=True, query=prefill, placeholder=placeholder,
                                            deadline=_deadline(timeout)))

    async def open_panel(self, panel: Panel) -> Any:
        """Show ``panel`` in place of the editor until it answers; returns its answer."""
        if self.panel is not None:
            raise PiError(f"Another question is open: {self.panel.title}")
        self.panel = panel
        self.asked.set()
        self._panel_future = asyncio.get_running_loop().create_future()
        self.invalidate()
        ticking = self.spawn(self._tick_countdown()) if getattr(panel, "deadline", None) is not None else None
        try:
            return await self._panel_future
        finally:
            if ticking is not None:
                ticking.cancel()
            self.panel, self._panel_future = None, None
            self.invalidate()

    async def _tick_countdown(self) -> None:
        """Redraw a timed dialog's title as its seconds go down."""
        while True:
            await asyncio.sleep(0.2)
            self.invalidate()

    def panel_done(self, value: Any) -> None:
        if self._panel_future is not None and not self._panel_future.done():
            self._panel_future.set_result(value)

    # --- settings, theme, small actions ---------------------------------------------------------------

    def setting(self, key: str, default: Any = None) -> Any:
        settings = self.session.settings
        return default if settings is None else settings.get(key, default)

    def set_hint(self, text: str | None) -> None:
        self.hint = text
        self.invalidate()

    def load_theme(self, name: str | None = None) -> None:
        """(Re)discover themes (plugins' ones included) and apply ``name``, else ``--use-theme``, else the
        ``theme`` setting."""
        from pi_core.resources.themes import session_theme

        theme, found, warnings = session_theme(self.session, self.startup.args if self.startup else None, name)
        self.themes = found
        self.theme_notes = warnings
        self.apply_theme(theme)

    def session_started(self) -> None:
        """The plugins' session_start returned: the themes they contributed (``pi_resources_discover``) join the
        list (the setting may name one)."""
        if getattr(self.session.prompt_source, "theme_paths", None):
            self.load_theme()
        self.release_intro()

    def apply_theme(self, theme: Theme) -> None:
        style.set_theme(theme)
        self.theme_watcher.watch(theme)
        self.console.push_theme(style.rich_theme())
        self.screen.forget()
        self.invalidate()

    def _theme_reloaded(self, theme: Theme) -> None:
        self.themes.themes[theme.name] = theme
        self.apply_theme(theme)
        self.notify(f"Theme reloaded: {theme.name}", "green")

    def clear_editor(self) -> None:
        self.buffer.reset()
        self.attachments.clear()
        self.invalidate()

    def toggle_tool_output(self) -> None:
        """Ctrl+O: every tool output opens (or folds); the transcript is drawn again so old ones do too."""
        self.view.expanded = not self.view.expanded
        self.set_hint("Tool output " + ("expanded" if self.view.expanded else "collapsed"))
        if not self.busy:
            self.redraw_transcript()

    def redraw_transcript(self) -> None:
        """Clear the screen and its scrollback and draw the whole conversation again."""
        transcript.redraw(self)

    def replay(self) -> None:
        """Draw the session's transcript again (after /resume, /tree, /fork); custom entries in time order."""
        transcript.replay(self)

    def release_intro(self) -> None:
        """After the plugins' session_start: the header (theirs, if one set it), warnings, then what waited."""
        intro = self.scrollback.intro
        if intro is not None:
            intro[:0] = [render_notice(f"Warning: {note}", "yellow") for note in [*self.startup_notes,
                                                                                   *self.theme_notes]]
        self.scrollback.release_intro(None if self.quiet_startup else lambda: transcript.header_renderable(self))

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        task = asyncio.get_running_loop().create_task(coro)
        self.tasks.add(task)
        task.add_done_callback(self._task_done)
        return task

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        self.tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            err = task.exception()
            self.notify(f"Error: {type(err).__name__}: {err}", "red")

    async def confirm(self, title: str, message: str = "") -> bool:
        from pi_plugins.interactive.pickers import PickItem

        heading = f"{title}\n{message}" if message else title
        return await self.pick(heading, [PickItem("Yes", True), PickItem("No", False)]) is True

    def screen_rows(self) -> int:
        return self.app.output.get_size().rows if self.running else 40

    def width(self) -> int:
        return self.app.output.get_size().columns if self.running else self.console.width

    def rebuild_layout(self) -> None:
        """Build the layout again after a setting that shapes it changed (padding, cursor, menu height)."""
        self.app.layout = Layout(self.screen.build(), focused_element=self.buffer)
        self.invalidate()

    def invalidate(self) -> None:
        self.version += 1
        if self.running:
            self.app.invalidate()

    def _transcript_pane(self) -> Scrollback:
        from pi_plugins.interactive.fullscreen import exit_output
        from pi_plugins.interactive.fullscreen_pane import TranscriptPane

        return TranscriptPane(self, live=lambda: self.view.live(), version=lambda: self.version,
                              finish=lambda pane: exit_output(self, pane))

    def _fullscreen_screen(self) -> Screen:
        from pi_plugins.interactive.fullscreen import FullscreenScreen
        from pi_plugins.interactive.fullscreen_pane import TranscriptPane

        assert isinstance(self.scrollback, TranscriptPane)
        return FullscreenScreen(self, self.scrollback)

    def _key_bindings(self) -> Any:
        if not self.fullscreen:
            return keys.build(self)
        from pi_plugins.interactive.fullscreen import FullscreenScreen, bindings
        from prompt_toolkit.key_binding import merge_key_bindings

        assert isinstance(self.screen, FullscreenScreen)
        return merge_key_bindings([keys.build(self), bindings(self, self.screen)])  # the later wins a shared key

    def _collect_shortcuts(self) -> None:
        from pi_plugins.interactive import shortcuts

        found, warnings = shortcuts.resolve(list(self.session.plugins.call_sync("pi_shortcuts")), self.keybindings)
        self.shortcuts = found
        self.startup_notes += warnings

    def plugins_renewed(self) -> None:
        """The session was replaced or reloaded: draw with and bind what the live plugins contribute now (a
        class plugin's new instance): tool, message and entry renderers, slash commands, shortcuts."""
        self.view.renderers = resolve_renderers(dict(self.session.registry.renderers.items))
        self.view.custom.collect()
        self.refresh_commands()
        self._collect_shortcuts()
        self.bindings = self._key_bindings()

    def reload_ui(self) -> None:
        """/reload: keybindings.json and the theme files are read again."""
        self.keybindings = load_keybindings(self.agent_dir)
        self._collect_shortcuts()
        self.bindings = self._key_bindings()
        self.load_theme()
        for note in self.keybindings.diagnostics:
            self.notify(note, "yellow")

    # --- events, input, running ------------------------------------------------------------------------

    def _on_event(self, event: Any) -> None:
        if event.type in ("agent_start", "agent_end"):  # as Pi's loader: none while agent_end handlers run
            self.run_ended = event.type == "agent_end"
            self.progress.on_event(event)
        self.view.handle(event)
        usage_notices.on_event(self, event)
        if event.type in ("message_end", "agent_end", "turn_end"):
            self.entries.check()
        self.invalidate()

    async def abort(self) -> None:
        """Escape while working: stop the run and put the queued messages back in the editor."""
        await prompting.abort(self)

    async def run(self, initial_message: str | None = None, initial_images: list[Any] | None = None) -> int:
        return await lifecycle.run(self, initial_message, initial_images)
