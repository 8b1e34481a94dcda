"""The interactive application: a prompt_toolkit app drawn below the terminal's scrollback.

Finished output goes to the scrollback through ``run_in_terminal`` (so the terminal keeps it and
the user can scroll); the app itself only holds what is still live: the streaming reply, running
tools, the working indicator, the editor (or a picker), completions and the footer.
"""

from __future__ import annotations

import asyncio
import io
import time
from pathlib import Path
from typing import Any

from pi_plugins.interactive import attachments, ext_ui, keys, shell, style
from pi_plugins.interactive.builtin_commands import BUILTIN_COMMANDS
from pi_plugins.interactive.chrome import EditorHost, FooterData
from pi_plugins.interactive.commands import MenuCommand, collect_commands, run_command
from pi_plugins.interactive.editor import FileIndex, classify, make_completer
from pi_plugins.interactive.footer import footer_lines
from pi_plugins.interactive.header import StartupInfo, render_header, startup_info
from pi_plugins.interactive.hosting import (
    KeyRouter,
    OverlayStack,
    Tui,
    dispose,
    fragments,
    render_lines,
)
from pi_plugins.interactive.keybindings import load_keybindings
from pi_plugins.interactive.panel import Panel
from pi_plugins.interactive.pickers import Picker
from pi_plugins.interactive.preload import Preloader
from pi_plugins.interactive.renderers import resolve_renderers
from pi_plugins.interactive.view import ChatView, render_notice
from prompt_toolkit.application import Application, run_in_terminal
from prompt_toolkit.buffer import Buffer
from prompt_toolkit.filters import Condition
from prompt_toolkit.formatted_text import ANSI
from prompt_toolkit.history import InMemoryHistory
from prompt_toolkit.layout import ConditionalContainer, HSplit, Layout, Window
from prompt_toolkit.layout.controls import BufferControl, FormattedTextControl
from prompt_toolkit.layout.dimension import Dimension
from prompt_toolkit.layout.menus import CompletionsMenu
from rich.console import Console

from pi_core.control.session_control import SessionControl
from pi_core.errors import PiError

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
STARTUP_WAIT_SECONDS = 2.0  # longest the first frame waits for the plugins' session_start


def color_depth() -> Any:
    """24-bit colour when the terminal says it has it (COLORTERM), as rich decides for the scrollback; else
    prompt_toolkit's own choice. Plugins' widgets and components often use truecolor codes."""
    import os

    from prompt_toolkit.output import ColorDepth

    if os.environ.get("COLORTERM", "").lower() in ("truecolor", "24bit"):
        return ColorDepth.TRUE_COLOR
    return None


class _Raw:
    """Something to do at its turn in the scrollback queue instead of printing (clearing the screen)."""

    def __init__(self, action: Any) -> None:
        self.action = action


class InteractiveApp:
    def __init__(self, session: Any, *, startup: Any = None, header: StartupInfo | None = None,
                 console: Console | None = None, input: Any = None, output: Any = None,
                 preloader: Preloader | None = None, quiet_startup: bool = False) -> None:
        self.session = session
        self.control = SessionControl(session)
        self.startup = startup
        self.quiet_startup = quiet_startup
        self.header = header
        self.console = console or Console(highlight=False)
        self.view = ChatView(resolve_renderers(dict(session.registry.renderers.items)), self._commit)
        if session.settings is not None and session.settings.get("hideThinkingBlock", False) is True:
            self.view.show_thinking = False  # Ctrl+T shows it again
        self.commands: dict[str, MenuCommand] = {}
        self.refresh_commands()
        self.preloader = preloader or Preloader(session)
        self.busy = False
        self.started_at = 0.0
        self.shell_job: shell.ShellJob | None = None
        self.panel: Panel | None = None  # a picker, /tree, /settings ... shown in place of the editor
        self._panel_future: asyncio.Future[Any] | None = None
        self.startup_notes: list[str] = []  # problems found while starting (themes, keybindings)
        self.attachments: list[attachments.Attachment] = []  # images waiting in the editor as chips
        from pi_core.config_paths import agent_dir

        self.agent_dir = agent_dir()
        self.keybindings = load_keybindings(self.agent_dir)
        self.startup_notes += self.keybindings.diagnostics
        self.shortcuts: list[Any] = []  # plugins' (pi_shortcuts), bound by keys.build
        self._collect_shortcuts()
        self.themes: Any = None  # the ThemeSet found by load_theme()
        self.theme_watcher = style.ThemeWatcher(self._theme_reloaded, lambda text: self.notify(text, "red"))
        self.last_ctrl_c = 0.0
        self.last_escape = 0.0
        self.hint: str | None = None  # one-line notice above the editor ("press ctrl+c again...")
        self.working_message = "Working…"  # plugins may change it (ui.set_working_message)
        self.statuses: dict[str, str] = {}  # plugins' ``ui.set_status`` texts, shown in the footer
        # ui.set_widget: lines, or a component from the plugin's factory
        self.widgets: dict[str, dict[str, Any]] = {"aboveEditor": {}, "belowEditor": {}}
        self.working_visible = True  # ui.set_working_visible
        self.working_indicator: Any = None  # ui.set_working_indicator (None: pi's spinner)
        self.tui = Tui(self)  # what plugins' component factories get
        self.router = KeyRouter(self)
        self.overlays = OverlayStack(self, [])
        self.custom_editor: Any = None  # ui.set_editor_component
        self.custom_editor_factory: Any = None
        self.footer_component: Any = None  # ui.set_footer
        self.footer_data = FooterData(self)
        self.header_component: Any = None  # ui.set_header
        self.autocomplete: Any = None  # the top of the ui.add_autocomplete_provider stack
        self._intro: list[Any] | None = None  # start-up output held until the plugins' session_start returned
        self._asked = asyncio.Event()  # a plugin opened a question or component (start-up stops waiting)
        self._pending: list[Any] = []
        self._flushing = False
        self._running = False
        self._live_cache: tuple[int, int, list[Any]] | None = None
        self._version = 0
        self._tasks: set[asyncio.Task[Any]] = set()
        self.exit_code = 0
        self.history = InMemoryHistory()
        for message in session.messages:
            if getattr(message, "role", None) == "user":
                self.history.append_string(message.text())
        self.files = FileIndex(session.config.cwd)
        self.buffer = Buffer(
            multiline=True, history=self.history,
            completer=make_completer(lambda: self.commands, session.config.cwd, self.files, lambda: self.autocomplete),
            complete_while_typing=Condition(self._completing_while_typing),
        )
        self.app: Application[int] = Application(
            layout=Layout(self._layout(), focused_element=self.buffer),
            key_bindings=keys.build(self), full_screen=False, input=input, output=output, color_depth=color_depth(),
            mouse_support=False, min_redraw_interval=0.03, erase_when_done=False,
        )
        self.app.ttimeoutlen = 0.05
        self.app.timeoutlen = 0.3
        self.router.install(self.app.input)
        self.app.before_render += lambda app: self.overlays.arrange(self.width(), self.screen_rows())
        from pi_plugins.interactive.custom_render import CustomRenderers, EntryWatcher
        from pi_plugins.interactive.ext_ui import theme_for_plugins

        self.view.custom = CustomRenderers(session, theme_for_plugins, self._width)
        self.entries = EntryWatcher(session, self.view.custom, self._commit, lambda: self.view.expanded)
        self.unsubscribe = session.subscribe(self._on_event)
        self.load_theme()
        style.code_block_indent = str(self.setting("markdown.codeBlockIndent", "  "))

    # --- commands (also the CommandUI protocol) -----------------------------------------------------

    def refresh_commands(self) -> None:
        resources = getattr(self.startup, "resources", None) or self.session.resources
        self.commands = collect_commands(BUILTIN_COMMANDS, self.session, resources,
                                         warn=lambda text: self.notify(text, "yellow"))

    def notify(self, text: str, style: str = "dim") -> None:
        self._commit(render_notice(text, style))

    def show(self, renderable: Any) -> None:
        self._commit(renderable)

    def set_editor_text(self, text: str) -> None:
        from prompt_toolkit.document import Document

        self.buffer.set_document(Document(text, len(text)), bypass_readonly=True)

    def exit(self, code: int = 0) -> None:
        self.exit_code = code
        if self.app.is_running and not self.app.future.done():  # type: ignore[union-attr]
            self.app.exit(result=code)

    async def pick(self, title: str, items: list[Any], *, multi: bool = False,
                   checked: set[int] | None = None, index: int = 0) -> Any:
        """Show a picker in place of the editor; the chosen value, or None when cancelled."""
        return await self.open_panel(Picker(title, items, multi=multi, checked=set(checked or ()), index=index))

    async def ask(self, title: str, placeholder: str = "", prefill: str = "") -> str | None:
        """One line of text from the user (a plugin's ``ui.input``), or None when cancelled."""
        return await self.open_panel(Picker(title, [], free_text=True, query=prefill, placeholder=placeholder))

    async def open_panel(self, panel: Panel) -> Any:
        """Show ``panel`` in place of the editor until it answers; returns its answer."""
        if self.panel is not None:
            raise PiError(f"Another question is open: {self.panel.title}")
        self.panel = panel
        self._asked.set()
        self._panel_future = asyncio.get_running_loop().create_future()
        self.invalidate()
        try:
            return await self._panel_future
        finally:
            self.panel, self._panel_future = None, None
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
        """(Re)discover themes and apply ``name``, else ``--use-theme``, else the ``theme`` setting."""
        from pi_core.resources.themes import active_theme, setting_theme_paths

        args = getattr(self.startup, "args", None)
        settings = self.session.settings
        cwd = Path(self.session.config.cwd)
        paths = setting_theme_paths(settings.scope_data("global"), settings.scope_data("project"), self.agent_dir,
                                    cwd) if settings is not None and hasattr(settings, "scope_data") else []
        theme, found, warnings = active_theme(
            cwd, self.agent_dir, name or self.setting("theme"), use_theme=None if name else getattr(args, "use_theme", None),
            cli_paths=[Path(p).expanduser() for p in getattr(args, "themes", None) or []], setting_paths=paths,
            no_themes=bool(getattr(args, "no_themes", False)),
            project_trusted=lambda: self.session.project_trusted,
        )
        self.themes = found
        self.startup_notes += warnings
        self.apply_theme(theme)

    def apply_theme(self, theme: Any) -> None:
        style.set_theme(theme)
        self.theme_watcher.watch(theme)
        self.console.push_theme(style.rich_theme())
        self._live_cache = None
        self.invalidate()

    def _theme_reloaded(self, theme: Any) -> None:
        self.themes.themes[theme.name] = theme
        self.apply_theme(theme)
        self.notify(f"Theme reloaded: {theme.name}", "green")

    def cycle_model(self, backward: bool) -> None:
        changed = self.control.cycle_model(backward=backward)
        model = self.session.model
        self.set_hint(f"Model: {model.provider}/{model.id}" if changed else "Only one model to cycle through")

    def clear_editor(self) -> None:
        self.buffer.reset()
        self.attachments.clear()
        self.invalidate()

    def dequeue(self) -> None:
        """Alt+Up: the queued steering and follow-up messages come back into the editor, in order."""
        agent = self.session.agent
        queued = [m.text() for m in [*agent.steering_queue, *agent.follow_up_queue] if hasattr(m, "text")]
        if not queued:
            self.set_hint("No queued messages")
            return
        agent.clear_all_queues()
        self.view.steering, self.view.follow_up = [], []
        current = self.buffer.text
        self.set_editor_text("\n".join([*queued, *([current] if current else [])]))
        self.set_hint(f"Restored {len(queued)} queued message{'s' if len(queued) > 1 else ''}")

    def toggle_tool_output(self) -> None:
        """Ctrl+O: every tool output opens (or folds); the transcript is drawn again so old ones do too."""
        self.view.expanded = not self.view.expanded
        self.set_hint("Tool output " + ("expanded" if self.view.expanded else "collapsed"))
        if not self.busy:
            self.redraw_transcript()

    def redraw_transcript(self) -> None:
        """Clear the screen and its scrollback and draw the whole conversation again."""
        import sys

        def clear() -> None:
            out = self.console.file if self.console.file is not sys.stdout else sys.stdout
            out.write("\x1b[3J\x1b[H\x1b[2J")
            out.flush()

        self._pending.append(_Raw(clear))
        self._pending.append(self.header_renderable())
        self.replay()

    def paste_image(self) -> None:
        self.spawn(attachments.paste_from_clipboard(self))

    def paste_text(self, data: str) -> None:
        attachments.paste_text(self, data)

    def spawn(self, coro: Any) -> asyncio.Task[Any]:
        return self._spawn(coro)

    async def confirm(self, title: str, message: str = "") -> bool:
        from pi_plugins.interactive.pickers import PickItem

        heading = f"{title}\n{message}" if message else title
        return await self.pick(heading, [PickItem("Yes", True), PickItem("No", False)]) is True

    def screen_rows(self) -> int:
        return self.app.output.get_size().rows if self._running else 40

    def rebuild_layout(self) -> None:
        """Build the layout again after a setting that shapes it changed (padding, cursor, menu height)."""
        self.app.layout = Layout(self._layout(), focused_element=self.buffer)
        self.invalidate()

    def _collect_shortcuts(self) -> None:
        from pi_plugins.interactive import shortcuts

        found, warnings = shortcuts.resolve(list(self.session.plugins.call_sync("pi_shortcuts")), self.keybindings)
        self.shortcuts = found
        self.startup_notes += warnings

    def reload_ui(self) -> None:
        """/reload: keybindings.json and the theme files are read again."""
        self.keybindings = load_keybindings(self.agent_dir)
        self._collect_shortcuts()
        self.app.key_bindings = keys.build(self)
        self.load_theme()
        for note in self.keybindings.diagnostics:
            self.notify(note, "yellow")

    def replay(self) -> None:
        """Draw the session's transcript again (after /resume, /tree, /fork); custom entries in time order."""
        from pi_plugins.interactive.custom_render import entry_time_ms

        from pi_core.events import AgentEvent

        branch = getattr(self.session.store, "get_branch", None)
        entries = [e for e in (branch() if callable(branch) else []) if e.get("type") == "custom"
                   and e.get("customType") in self.view.custom.entries]

        def entries_until(when: float) -> None:
            while entries and entry_time_ms(entries[0]) <= when:
                drawn = self.view.custom.entry(entries.pop(0), self.view.expanded)
                if drawn is not None:
                    self._commit(drawn)

        for message in self.session.messages:
            entries_until(float(getattr(message, "timestamp", 0) or 0))
            role = getattr(message, "role", None)
            if role == "toolResult":
                self.view.handle(AgentEvent("tool_execution_end", tool_call_id=message.tool_call_id,
                                            tool_name=message.tool_name, result=message, is_error=message.is_error))
                continue
            self.view.handle(AgentEvent("message_start", message=message))
            self.view.handle(AgentEvent("message_end", message=message))
        entries_until(float("inf"))
        self.view.handle(AgentEvent("agent_end", messages=[]))
        self.entries.reset()

    # --- output -----------------------------------------------------------------------------------

    def _commit(self, renderable: Any) -> None:
        self._pending.append(renderable)
        self._version += 1
        if self._intro is not None:  # start-up: printed behind the header once session_start returned
            self.invalidate()
            return
        if not self._running:
            self._print_pending()
        elif not self._flushing:
            self._flushing = True
            self._spawn(self._flush())
        self.invalidate()

    async def _flush(self) -> None:
        try:
            while self._pending:
                await run_in_terminal(self._print_pending)
        finally:
            self._flushing = False

    def _print_pending(self) -> None:
        items, self._pending = self._pending, []
        for renderable in items:
            if isinstance(renderable, _Raw):
                renderable.action()
                continue
            self.console.print()
            self.console.print(renderable)

    def invalidate(self) -> None:
        self._version += 1
        if self._running:
            self.app.invalidate()

    def _spawn(self, coro: Any) -> asyncio.Task[Any]:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)
        return task

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            err = task.exception()
            self.notify(f"Error: {type(err).__name__}: {err}", "red")

    # --- events -----------------------------------------------------------------------------------

    def _on_event(self, event: Any) -> None:
        self.view.handle(event)
        if event.type in ("message_end", "agent_end", "turn_end"):
            self.entries.check()
        self.invalidate()

    # --- submitting -------------------------------------------------------------------------------

    def submit(self, *, follow_up: bool = False) -> None:
        text = self.buffer.text
        kind = classify(text)
        if kind.kind == "empty" and not self.attachments:
            return
        self.buffer.reset(append_to_history=True)
        self.hint = None
        if kind.kind == "command":
            command = self.commands.get(kind.command)
            if command is None:  # "/mo": the one command it begins, as completion would give
                starting = [c for name, c in self.commands.items() if name.startswith(kind.command)]
                command = starting[0] if len(starting) == 1 else None
            if command is not None and command.handler is not None:
                self._spawn(self._run_command(command, kind.args))
                return
            if command is None:  # no command, template or skill: a typo is not a prompt (issue 16 item 13)
                self.notify(f"Unknown command: /{kind.command}", "red")
                self.set_editor_text(text)
                return
        if kind.kind == "bash":
            self.shell_job = shell.ShellJob(self, kind.command, kind.send_output)
            self._spawn(self.shell_job.run())
            return
        if self.busy:
            if kind.text.strip():  # image chips wait for the next message of their own
                (self.session.follow_up if follow_up else self.session.steer)(kind.text)
            return
        self.busy = True  # now, not when the task starts: a quick second Enter must steer, not start a run
        self._spawn(self.run_prompt(kind.text, attachments.take(self) or None))

    def run_command_text(self, text: str) -> None:
        """Run a slash command as if typed (keys that open /model, /tree)."""
        kind = classify(text)
        command = self.commands.get(kind.command)
        if command is not None and command.handler is not None and self.panel is None:
            self._spawn(self._run_command(command, kind.args))

    async def _run_command(self, command: MenuCommand, args: str) -> None:
        try:
            await run_command(command, self, args)
        except PiError as err:
            self.notify(str(err), "red")
        finally:
            self.entries.check()

    async def run_prompt(self, text: str, images: list[Any] | None = None) -> None:
        self.busy, self.started_at = True, time.monotonic()
        self.invalidate()
        ticker = self._spawn(self._tick())
        try:
            if not self.preloader.done():
                self.view.pending_prompt = text  # shown at once; the session echoes it when the run starts
                self.invalidate()
            await self.preloader.wait()
            if self.preloader.error is not None:
                self.notify(f"Loading the provider in the background failed: {self.preloader.error}", "yellow")
                self.preloader.error = None  # said once; the request below reports the real failure
            await self.session.prompt(text, images, source="interactive")
        except PiError as err:
            self.notify(str(err), "red")
        finally:
            self.view.pending_prompt = None
            self.busy = False
            ticker.cancel()
            self.invalidate()

    def _new_changelog(self) -> list[Any]:
        """After an update, the changelog entries newer than the version pi last ran as (once)."""
        from pi_plugins.interactive.session_commands import (
            changelog_path,
            changelog_sections,
            new_since,
            render_changelog,
        )

        from pi_core import __version__

        last = self.setting("lastChangelogVersion")
        settings = self.session.settings
        if last == __version__ or settings is None:
            return []
        path = changelog_path()
        sections = changelog_sections(path.read_text(encoding="utf-8")) if path is not None else []
        fresh = new_since(sections, last) if last is not None else []
        settings.set("lastChangelogVersion", __version__, "global")
        if not fresh or self.quiet_startup:
            return []
        return [render_notice(f"Updated to pi {__version__}. What's new:", "green"),
                render_changelog(fresh, self.setting("collapseChangelog", False) is True)]

    async def _watch_theme(self) -> None:
        """Pick up an edited theme file within a second or so."""
        while True:
            await asyncio.sleep(0.5)
            self.theme_watcher.poll()
            self.footer_data.poll()
            self.entries.check()

    async def _tick(self) -> None:
        """Redraw the working indicator (spinner, elapsed time) while a run lasts; idle costs nothing."""
        while True:
            await asyncio.sleep(0.1)
            if self._running:
                self.app.invalidate()

    async def abort(self) -> None:
        """Escape while working: stop the run and put the queued messages back in the editor."""
        agent = self.session.agent
        queued = [m.text() for m in [*agent.steering_queue, *agent.follow_up_queue] if hasattr(m, "text")]
        agent.clear_all_queues()
        if queued:
            current = self.buffer.text
            self.set_editor_text("\n".join([*queued, *([current] if current else [])]))
        self.view.steering, self.view.follow_up = [], []
        await self.session.abort()

    # --- layout -----------------------------------------------------------------------------------

    def _completing_while_typing(self) -> bool:
        from pi_plugins.interactive.completion import triggers

        before = self.buffer.document.text_before_cursor
        if before.startswith("/") and "\n" not in before:
            name, space, _ = before[1:].partition(" ")
            command = self.commands.get(name) if space else None
            return not space or (command is not None and command.complete is not None)
        word = before.split()[-1] if before and not before[-1].isspace() else ""
        return word.startswith("@") or any(word.startswith(t) for t in triggers(self.autocomplete))

    def _width(self) -> int:
        return self.app.output.get_size().columns if self._running else self.console.width

    def width(self) -> int:
        return self._width()

    def _live_fragments(self) -> Any:
        width, rows = self._width(), self.app.output.get_size().rows if self._running else 40
        if self._live_cache is None or self._live_cache[:2] != (self._version, width):
            live = self.view.live()
            text = ""
            if live is not None:
                buffer = io.StringIO()
                Console(file=buffer, force_terminal=True, color_system="truecolor", width=width,
                        highlight=False).print(live)
                lines = buffer.getvalue().rstrip("\n").split("\n")
                keep = max(3, rows - 8)  # the tail that fits; the whole block goes to scrollback when done
                text = "\n".join(lines[-keep:])
            self._live_cache = (self._version, width, ANSI(text).__pt_formatted_text__())
        return self._live_cache[2]

    def _widget_lines(self, placement: str) -> list[str]:
        lines: list[str] = []
        for content in self.widgets[placement].values():
            lines += content if isinstance(content, list) else render_lines(content, self._width())
        return lines

    def _widget_fragments(self, placement: str) -> Any:
        return fragments(self._widget_lines(placement))

    def _indicator(self) -> list[Any]:
        """The working row's animation: pi's spinner, or a plugin's frames (verbatim; none at all for [])."""
        indicator = self.working_indicator
        if indicator is None:
            return [(style.pt("accent"), SPINNER[int(time.monotonic() * 10) % len(SPINNER)] + " ")]
        if not indicator.frames:
            return []
        step = max(1, int(indicator.interval_ms)) / 1000
        frame = indicator.frames[int(time.monotonic() / step) % len(indicator.frames)]
        return [*fragments([frame]), ("", " ")]

    def _status_fragments(self) -> Any:
        if self.busy and not self.working_visible:
            return [(style.pt("muted"), self.hint or "")]
        if self.busy:
            elapsed = int(time.monotonic() - self.started_at)
            message = fragments([self.working_message]) if "\x1b" in self.working_message else [
                (style.pt("accent"), self.working_message)]  # a plugin's message may bring its own colour
            return [*self._indicator(), *message, ("", " "), (style.pt("muted"), f"({elapsed}s) · esc to interrupt")]
        if self.shell_job is not None and self.shell_job.running:
            return [(style.pt("accent"), "Running shell command… "), (style.pt("muted"), "esc to cancel")]
        return [(style.pt("muted"), self.hint or "")]

    def _attachment_fragments(self) -> Any:
        chips = [(f"{style.pt('accent')} reverse", f" {a.label} ") for a in self.attachments]
        spaced: list[tuple[str, str]] = []
        for chip in chips:
            spaced += [chip, ("", " ")]
        return spaced

    def _footer_fragments(self) -> Any:
        if self.footer_component is not None:
            return fragments(render_lines(self.footer_component, self._width()))
        first, second = footer_lines(self.session, self._width())
        drawn: list[Any] = [(style.pt("dim"), first + "\n" + second)]
        if self.statuses:  # plugins may colour their status with ANSI codes
            drawn.append(("", "\n"))
            drawn += ANSI(" · ".join(self.statuses.values())).__pt_formatted_text__()
        return drawn

    def _panel_fragments(self) -> Any:
        return self.panel.lines(self._width()) if self.panel else []

    def _custom_editor_fragments(self) -> Any:
        return fragments(render_lines(self.custom_editor, self._width())) if self.custom_editor else []

    def set_custom_editor(self, factory: Any) -> None:
        """``ui.set_editor_component``: a plugin's editor in place of pi's (None: pi's again)."""
        if self.custom_editor is not None:
            dispose(self.custom_editor)
        self.custom_editor_factory, self.custom_editor = factory, None
        if factory is not None:
            from pi_plugins.interactive.ext_ui import theme_for_plugins

            editor = factory(self.tui, theme_for_plugins(), self.keybindings)
            editor.host = EditorHost(self)
            self.custom_editor = editor
        self.invalidate()

    def _filler_rows(self, main: Any) -> int:
        """While an overlay is open the app takes the whole terminal (it floats over the full height)."""
        if not self._running or not self.overlays.visible(self._width()):
            return 0
        rows = self.screen_rows()
        return max(0, rows - main.preferred_height(self._width(), rows).preferred)

    def _layout(self) -> Any:
        has_live = Condition(self.view.has_live)
        picking = Condition(lambda: self.panel is not None)
        from pi_plugins.interactive.editor import DrawnCursor
        from prompt_toolkit.layout import VSplit

        def rule() -> Window:
            return Window(height=1, char="─", style=lambda: style.pt("borderMuted"))

        padding = max(0, min(3, int(self.setting("editorPaddingX", 0) or 0)))
        hardware_cursor = self.setting("showHardwareCursor", False) is True
        control = BufferControl(self.buffer, input_processors=[] if hardware_cursor else [DrawnCursor()])
        text = Window(control, wrap_lines=True, height=Dimension(min=1, max=12), dont_extend_height=True,
                      always_hide_cursor=not hardware_cursor)
        row = VSplit([Window(width=padding), text, Window(width=padding)]) if padding else text
        has_chips = Condition(lambda: bool(self.attachments))
        custom_editor = Condition(lambda: self.custom_editor is not None)
        editor = HSplit([rule(), ConditionalContainer(Window(FormattedTextControl(self._attachment_fragments), height=1),
                                                      filter=has_chips), row, rule()])
        main = HSplit([
            ConditionalContainer(Window(FormattedTextControl(self._live_fragments), wrap_lines=False,
                                        dont_extend_height=True), filter=has_live),
            Window(FormattedTextControl(self._status_fragments), height=1),
            ConditionalContainer(Window(FormattedTextControl(self._panel_fragments), dont_extend_height=True),
                                 filter=picking),
            ConditionalContainer(Window(FormattedTextControl(lambda: self._widget_fragments("aboveEditor")),
                                        dont_extend_height=True),
                                 filter=Condition(lambda: bool(self.widgets["aboveEditor"]))),
            ConditionalContainer(editor, filter=~picking & ~custom_editor),
            ConditionalContainer(Window(FormattedTextControl(self._custom_editor_fragments), dont_extend_height=True),
                                 filter=~picking & custom_editor),
            ConditionalContainer(Window(FormattedTextControl(lambda: self._widget_fragments("belowEditor")),
                                        dont_extend_height=True),
                                 filter=Condition(lambda: bool(self.widgets["belowEditor"]))),
            CompletionsMenu(max_height=max(3, min(20, int(self.setting("autocompleteMaxVisible", 5) or 5))),
                            scroll_offset=1),
            Window(FormattedTextControl(self._footer_fragments), dont_extend_height=True),
        ])
        from prompt_toolkit.layout import FloatContainer

        filler = Window(height=lambda: Dimension.exact(self._filler_rows(main)))
        return FloatContainer(HSplit([filler, main]), floats=self.overlays.floats)

    # --- running ----------------------------------------------------------------------------------

    def header_renderable(self) -> Any:
        """The header: a plugin's (``ui.set_header``) or pi's version, key hints and what was loaded."""
        if self.header_component is not None:
            from rich.text import Text

            return Text.from_ansi("\n".join(render_lines(self.header_component, self._width())))
        info = self.header or startup_info(self.session, self.startup)
        listing = self.setting("quietStartup", False) != "header"  # "header": keep only the header
        return render_header(info, self.session.config.cwd, listing=listing)

    def _release_intro(self) -> None:
        """After the plugins' session_start: the header (theirs, if one set it), then what waited behind it."""
        if self._intro is None:
            return
        intro = self._intro
        if not self.quiet_startup:
            intro.insert(0, self.header_renderable())
        self._intro = None
        self._pending[:0] = intro
        if not self._pending:
            return
        if not self._running:
            self._print_pending()
        elif not self._flushing:
            self._flushing = True
            self._spawn(self._flush())
        self.invalidate()

    async def run(self, initial_message: str | None = None, initial_images: list[Any] | None = None) -> int:
        self._intro = [render_notice(f"Warning: {note}", "yellow") for note in self.startup_notes]
        self._intro += self._new_changelog()
        if self.session.messages:  # --continue / --session: show the conversation so far
            self.replay()
        ext_ui.install(self)
        # plugins' session_start runs before the app draws, so a header it sets is the one shown; a question it
        # asks (or a slow start) lets the app start at once, the header following when session_start returns
        starting = self._spawn(self.session.start("startup"))
        starting.add_done_callback(lambda task: self._release_intro())
        asking = asyncio.ensure_future(self._asked.wait())
        await asyncio.wait({starting, asking}, timeout=STARTUP_WAIT_SECONDS, return_when=asyncio.FIRST_COMPLETED)
        asking.cancel()

        def on_first_render(app: Any) -> None:  # the prompt is on screen: now load the provider SDK
            self.app.after_render -= on_first_render
            self.preloader.start()

        self.app.after_render += on_first_render
        self._running = True
        try:
            def watch_theme() -> None:
                self._spawn(self._watch_theme())

            self.app.pre_run_callables.append(watch_theme)

            def send_initial() -> None:
                self._spawn(self.run_prompt(initial_message or "", initial_images))

            if initial_message or initial_images:
                self.app.pre_run_callables.append(send_initial)
            code = await self._run_app()
        finally:
            self._running = False
            if self.session.is_streaming:
                await self.session.abort()
            for task in list(self._tasks):
                task.cancel()
            await self.session.shutdown("quit")
            self.unsubscribe()
            self._release_intro()
            self._print_pending()
        return self.exit_code if code is None else code

    async def _run_app(self) -> int | None:
        """Run the app; an error escaping a redraw or callback ends it (terminal restored) and is raised."""
        loop = asyncio.get_running_loop()
        previous = loop.get_exception_handler()

        def on_error(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
            error = context.get("exception")
            if error is not None and self.app.is_running and not self.app.future.done():  # type: ignore[union-attr]
                self.app.exit(exception=error)
            else:
                loop.default_exception_handler(context)

        loop.set_exception_handler(on_error)
        try:
            return await self.app.run_async(set_exception_handler=False)
        finally:
            loop.set_exception_handler(previous)
