"""What plugins can do at run time (docs/plugins.md#the-extension-context): the context of hooks and tools.

Hooks receive an ``ExtensionContext`` (tools reach it as ``ctx.pi``; slash commands and shortcuts get the
``CommandContext`` subclass, which may also replace the session). Each plugin gets its own view
(``for_plugin``), so what it registers through the context (event-bus handlers, UI callbacks) is reported
under its name when it fails. Everything else is shared: the session, the mode's UI, the event bus.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from pi_core.event_bus import EventBus, PluginEvents
from pi_core.session_host import (  # noqa: F401 - NoModels re-exported: its home before session_host
    ContextUsage,
    ExecResult,
    ModelAccess,
    NoModels,
    SessionChange,
    SessionHost,
    ToolInfo,
)
from pi_core.ui import UI

if TYPE_CHECKING:
    from pi_core.hookspecs.entries import SessionEntries
    from pi_core.hookspecs.results import (
        CommandInfo,
        CompactionResult,
        SystemPromptOptions,
    )
    from pi_core.session_log import SessionLog
    from pi_core.signals import AbortSignal
    from pi_core.types import (
        AgentMessage,
        ImageContent,
        Model,
        ScopedModel,
        TextContent,
    )

T = TypeVar("T")
DeliverAs = Literal["steer", "followUp", "nextTurn"]


@dataclass(eq=False, repr=False)
class _Shared:
    """What all of a session's extension contexts share."""

    host: SessionHost
    ui: UI
    mode: str
    bus: EventBus
    loop: asyncio.AbstractEventLoop | None = None
    views: dict[tuple[type, str], ExtensionContext] = field(default_factory=dict)
    entries: SessionEntries | None = None


class ExtensionContext:
    """The session as a plugin sees it. ``plugin`` is the name of the plugin this view belongs to."""

    def __init__(self, session: SessionHost, ui: UI | None = None, *, mode: str = "text",
                 bus: EventBus | None = None, plugin: str = "", _shared: _Shared | None = None) -> None:
        self._shared = _shared or _Shared(session, ui or UI(), mode, bus or EventBus(getattr(session, "plugins", None)))
        self.plugin = plugin
        self.session: SessionHost = self._shared.host  # every view of one context shares its session

    def for_plugin(self, plugin: str) -> ExtensionContext:
        """This context as ``plugin``'s own (cached, so it costs nothing per hook call)."""
        key = (type(self), plugin)
        view = self._shared.views.get(key)
        if view is None:
            view = self._shared.views[key] = type(self)(self.session, plugin=plugin, _shared=self._shared)
        return view

    def as_command_context(self) -> CommandContext:
        return CommandContext(self.session, plugin=self.plugin, _shared=self._shared)

    # --- what the mode installs -------------------------------------------------------------------------

    @property
    def ui(self) -> UI:
        return self._shared.ui

    @ui.setter
    def ui(self, ui: UI) -> None:
        self._shared.ui = ui

    @property
    def mode(self) -> str:
        """pi's mode name: "interactive", "text" (``-p``), "json" or "rpc" (Pi says "tui" and "print")."""
        return self._shared.mode

    def bind(self, ui: UI, mode: str) -> None:
        self._shared.ui, self._shared.mode = ui, mode
        try:
            self._shared.loop = asyncio.get_running_loop()
        except RuntimeError:
            self._shared.loop = None

    @property
    def has_ui(self) -> bool:
        """True when someone can answer a dialog (interactive, RPC); False in print and JSON mode."""
        return self.ui.has_ui

    @property
    def events(self) -> PluginEvents:
        return PluginEvents(self._shared.bus, self.plugin)

    # --- the session ------------------------------------------------------------------------------------

    @property
    def cwd(self) -> Path:
        return self.session.cwd

    @property
    def model(self) -> Model:
        return self.session.model

    @property
    def thinking_level(self) -> str:
        return self.session.thinking_level

    @property
    def scoped_models(self) -> list[ScopedModel]:
        return self.session.scoped_models

    @property
    def signal(self) -> AbortSignal | None:
        """The running agent's abort signal (None when idle): pass it to long work started from a hook."""
        return self.session.signal

    @property
    def session_manager(self) -> SessionEntries:
        """The session file, read-only, its entries typed (``pi_core.hookspecs.entries``); follows the session
        when a command replaces it."""
        store, view = self.session.store, self._shared.entries
        if view is None or view.store is not store:
            from pi_core.hookspecs.entries import SessionEntries

            view = self._shared.entries = SessionEntries(store)
        return view

    @property
    def model_registry(self) -> ModelAccess:
        return self.session.model_access

    def is_idle(self) -> bool:
        """False while a run streams, retries, compacts or has queued continuations."""
        return self.session.is_idle

    def abort(self) -> None:
        self.session.request_abort()

    def has_pending_messages(self) -> bool:
        return self.session.has_queued_messages()

    def shutdown(self) -> None:
        """Ask the mode to quit: interactive once idle, RPC after the current command, print mode: nothing."""
        self.session.request_shutdown()

    def is_project_trusted(self) -> bool:
        """Whether this run loads the project's protected resources (docs/config.md#project-trust)."""
        return self.session.project_trusted

    def get_system_prompt(self) -> str:
        return self.session.system_prompt

    def get_context_usage(self) -> ContextUsage | None:
        return self.session.context_usage()

    def compact(self, custom_instructions: str | None = None, *,
                on_complete: Callable[[CompactionResult], object] | None = None,
                on_error: Callable[[BaseException], object] | None = None) -> asyncio.Task[object]:
        """Start a compaction and return at once; ``on_complete(result)`` / ``on_error(error)`` follow."""
        return self.session.compact_later(custom_instructions, on_complete, on_error)

    def get_settings(self) -> dict[str, Any]:  # open: the merged settings, JSON
        """A copy of the merged settings (global + project)."""
        return self.session.settings_copy()

    def get_flag(self, name: str) -> bool | str | None:
        """The value of a plugin flag (``pi_flags``): as given on the command line, else its default."""
        values = self.session.flag_values
        if name not in values:
            raise KeyError(f'Unknown flag "{name}": no plugin registered it (pi_flags)')
        return values[name]  # type: ignore[no-any-return]

    def get_commands(self) -> list[CommandInfo]:
        """Every slash command: plugins' (in layer order), then prompt templates, then skills."""
        return self.session.command_infos()

    # --- tools ------------------------------------------------------------------------------------------

    def get_active_tools(self) -> list[str]:
        return self.session.active_tool_names

    def get_all_tools(self) -> list[ToolInfo]:
        """Every registered tool (active or not): ``name``, ``description``, ``json_schema``, ``prompt_guidelines``,
        ``exposure``, ``annotations`` (the ``pi_core.tools.Tool`` objects)."""
        return list(self.session.available_tools.values())

    def set_active_tools(self, names: list[str]) -> None:
        """Activate exactly these tools (unknown names are ignored); effective from the next model request."""
        self.session.set_active_tools([n for n in names if n in self.session.available_tools])

    def add_tools(self, tools: list[Any]) -> list[str]:
        """Add ``pi_core.tools.Tool`` objects while the session runs (tools that appear as a connection comes
        up), replacing tools of the same name. ``--tools``/``--exclude-tools`` still apply; ``direct`` tools
        become active from the next model request, ``deferred`` ones wait to be activated. Returns the names
        actually added."""
        return self.session.add_tools(tools)

    def remove_tools(self, names: list[str]) -> None:
        """Withdraw tools added with ``add_tools``: from the next model request they are neither declared nor
        callable."""
        self.session.remove_tools(names)

    def get_messages(self) -> list[AgentMessage]:
        """The conversation on the current branch, oldest first (e.g. to restore what earlier tool calls loaded)."""
        return list(self.session.messages)

    async def refresh_tools(self) -> list[str]:
        """Ask every plugin's ``pi_tools`` again (tools added after start-up); new tools become active unless
        ``active_by_default=False``, and the system prompt is rebuilt. Returns the names added."""
        return await self.session.refresh_tools()

    # --- messages and entries ---------------------------------------------------------------------------

    def send_user_message(self, content: str | list[TextContent | ImageContent],
                          images: list[ImageContent] | None = None, *, deliver_as: DeliverAs | None = None,
                          expand_prompt_templates: bool = False) -> None:
        """Send a real user message: it goes through ``pi_input`` (source "extension") and starts a run when
        idle; while streaming it is queued as ``deliver_as`` ("steer" or "followUp", required then).
        ``expand_prompt_templates`` also runs plugin commands, templates and skills, as for typed input."""
        if isinstance(content, list):
            text = "\n".join(getattr(part, "text", "") for part in content if part.type == "text")
            images = [part for part in content if part.type == "image"] or images
        else:
            text = content
        if self.session.is_streaming and deliver_as is None:
            raise RuntimeError("The agent is streaming: pass deliver_as='steer' or 'followUp'")
        self._spawn(self.session.send_user_message(text, images, deliver_as=deliver_as, expand=expand_prompt_templates),
                    f"send_user_message ({self.plugin})")

    def send_message(self, custom_type: str, content: Any, *, display: bool = True, details: Any = None,  # open: plugin-defined content, details and data, stored in the session JSON
                     deliver_as: DeliverAs | None = None, trigger_turn: bool = False) -> None:
        """A custom message: while streaming queued ("steer", default, or "followUp"); "nextTurn" waits for the
        next prompt; idle it is recorded, and with ``trigger_turn`` it starts a run."""
        self.session.send_custom_message(custom_type, content, display=display, details=details,
                                         deliver_as=deliver_as, trigger_turn=trigger_turn)

    def append_entry(self, custom_type: str, data: Any = None) -> str:  # open: plugin-defined content, details and data, stored in the session JSON
        """A custom session entry (never sent to the model); returns its id."""
        return self.session.append_entry(custom_type, data)

    def set_session_name(self, name: str) -> None:
        self.session.set_session_name(name)

    def get_session_name(self) -> str | None:
        return self.session.session_name

    def set_label(self, entry_id: str, label: str | None) -> None:
        """Label an entry (``/tree`` shows it); None removes the label. An unknown id raises PiError."""
        self.session.set_label(entry_id, label)

    # --- model and thinking -----------------------------------------------------------------------------

    async def set_model(self, model: Model) -> bool:
        """Switch model (recorded in the session, ``pi_model_select`` fires); False when it has no credentials."""
        return await self.session.select_model(model, source="set")

    def get_thinking_level(self) -> str:
        return self.session.thinking_level

    def set_thinking_level(self, level: str) -> None:
        """Set the level, clamped to what the model supports (``pi_thinking_level_select`` fires)."""
        self.session.set_thinking_level(level)

    # --- processes and threads --------------------------------------------------------------------------

    async def exec(self, command: str, args: list[str] | None = None, *, cwd: str | Path | None = None,
                   timeout: float | None = None, signal: AbortSignal | None = None) -> ExecResult:
        """Run a program (no shell) in ``cwd`` (default ``ctx.cwd``). ``timeout`` in seconds; on timeout or
        ``signal`` the process group is killed (SIGTERM, SIGKILL after 5 s) and ``killed`` is True."""
        return await self.session.exec(command, list(args or []), cwd=Path(cwd) if cwd else None,
                                       timeout=timeout, signal=signal)

    def blocking(self, awaitable: Coroutine[object, object, T]) -> T:
        """Wait for an async context or UI method from a sync tool's worker thread (``ctx.pi.blocking(
        ctx.pi.ui.confirm(...))``). Must not be called on the event loop's own thread."""
        loop = self._shared.loop
        if loop is None:
            return asyncio.run(awaitable)
        return asyncio.run_coroutine_threadsafe(awaitable, loop).result()

    def _spawn(self, work: Awaitable[Any], what: str) -> None:
        task = asyncio.ensure_future(work)

        def done(finished: asyncio.Task[Any]) -> None:
            if not finished.cancelled() and finished.exception() is not None:
                from pi_core.registry import ExtensionError

                plugins = self.session.plugins
                plugins.report(ExtensionError(self.plugin, plugins.source_of(self.plugin), what,
                                              finished.exception()))  # type: ignore[arg-type]

        task.add_done_callback(done)


class CommandContext(ExtensionContext):
    """The context of slash commands and shortcuts: it may also wait for the agent and replace the session.
    A session replaced here makes this context stale: continue in ``with_session(ctx)``, which gets the new one."""

    async def wait_for_idle(self) -> None:
        """Return once the agent is idle: runs, retries, compaction and queued continuations done."""
        await self.session.wait_for_idle()

    async def new_session(self, *, parent_session: str | None = None,
                          setup: Callable[[SessionLog], object] | None = None,
                          with_session: Callable[[CommandContext], object] | None = None) -> SessionChange:
        """A fresh session (``pi_session_before_switch`` may veto). ``setup(store)`` may append entries to it
        before it starts; ``with_session(ctx)`` runs after ``pi_session_start``."""
        done = await self.session.new_session(parent_session, setup=setup)
        return await self._then(done, with_session)

    async def fork(self, entry_id: str, *, position: Literal["before", "at"] = "before",
                   with_session: Callable[[CommandContext], object] | None = None) -> SessionChange:
        """Fork before ``entry_id`` ("before", like ``/fork``) or clone up to the leaf ("at", like ``/clone``)."""
        if position == "at":
            return await self._then(await self.session.clone(), with_session)
        text, cancelled = await self.session.fork(entry_id)
        change = await self._then(not cancelled, with_session)
        change.selected_text = text
        return change

    async def switch_session(self, path: str, *,
                             with_session: Callable[[CommandContext], object] | None = None) -> SessionChange:
        return await self._then(await self.session.switch_session(path), with_session)

    async def navigate_tree(self, target_id: str | None, *, summarize: bool = False,
                            custom_instructions: str | None = None, replace_instructions: bool = False,
                            label: str | None = None) -> SessionChange:
        """Move the leaf (``/tree``), optionally summarising the branch left behind; raises while a run streams."""
        done = await self.session.navigate_tree(target_id, summarize=summarize,
                                                custom_instructions=custom_instructions,
                                                replace_instructions=replace_instructions, label=label)
        return SessionChange(cancelled=not done)

    async def reload(self) -> None:
        """``/reload``: settings, resources, ``-e`` plugin files re-imported, every contribution collected again."""
        await self.session.reload()

    def get_system_prompt_options(self) -> SystemPromptOptions:
        return self.session.system_prompt_options()

    async def _then(self, done: bool, with_session: Callable[[CommandContext], Any] | None) -> SessionChange:
        if done and with_session is not None:
            outcome = with_session(self)
            if inspect.isawaitable(outcome):
                await outcome
        return SessionChange(cancelled=not done)
