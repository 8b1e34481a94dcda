"""AgentSession: one coding-agent session, the object every mode (print, JSON, RPC, interactive) drives.

It binds an Agent to the plugins (tools, providers, hooks), the chosen model, the system prompt and the
session file. Everything it works with is handed in when it is built (``SessionParts``, see
``pi_core.session.parts``); what it holds and the changes made to it (model, tools, name, the session
file) are its base, ``pi_core.session.state.SessionState``, and this module adds the runs. Modes subscribe
to its events and call ``prompt`` / ``steer`` / ``follow_up`` /
``abort``; front-end commands (RPC state, cycling models, export) live in ``pi_core.control``, which wraps a
session. Every plugin hook is called through ``PluginSet.call`` with the session's ExtensionContext.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from pi_core.agent import Agent
from pi_core.errors import PiError
from pi_core.event_bus import EventBus
from pi_core.events import AgentEvent, Listener, Listeners
from pi_core.extension import ExtensionContext
from pi_core.hookspecs.results import CommandInfo, SlashCommand
from pi_core.loader import instances
from pi_core.loop import default_convert_to_llm
from pi_core.providers import StreamOptions
from pi_core.registry import ExtensionError, PluginSet, Registry, keyed
from pi_core.session.commands import PluginCommands
from pi_core.session.hooks import LoopHooks, custom_message
from pi_core.session.parts import SessionConfig, SessionParts, provider_stream_fn
from pi_core.session.retry import RetryingRuns
from pi_core.session.state import SessionState
from pi_core.session_host import NoModels
from pi_core.signals import AbortSignal
from pi_core.toolkit.arguments import PI_ARGUMENTS
from pi_core.types import (
    AgentMessage,
    AssistantMessage,
    ImageContent,
    TextContent,
    UserMessage,
    message_from_json,
)
from pi_core.ui import UI

if TYPE_CHECKING:
    from pi_core.hookspecs.results import CompactionResult
    from pi_core.session.parts import SessionFileOps, SessionStore, TreeMove

SessionListener = Listener


class AgentSession(SessionState):
    def __init__(self, config: SessionConfig, parts: SessionParts, *, plugins: PluginSet, registry: Registry) -> None:
        self.config = config
        self.plugins = plugins
        self.registry = registry
        self.store = parts.store
        self.models = parts.models
        self.settings = parts.settings
        self.prompt_source = parts.prompt
        self.compactor = parts.compactor
        self.retry = parts.retry
        self.files = parts.files
        self.expand_input = parts.expand_input or (lambda text: text)
        self._exec = parts.exec
        self.reimport = parts.reimport or (lambda plugins: None)
        self.cache_warmer = parts.cache_warmer
        self.auto_compaction = True
        self.listeners = Listeners(self._to_plugins)
        self._shutdown_requests: list[Callable[[], None]] = []
        self._renewal_handlers: list[Callable[[], None]] = []
        self._ended: list[str] = []  # class plugins whose instance ended with the last session (``shutdown``)
        self._queue_texts: tuple[list[str], list[str]] = ([], [])
        self._save_failed = False
        self._next_turn: list[AgentMessage] = []  # custom messages attached to the next prompt
        self._held_back: list[AgentMessage] = []  # user bash results that arrived during a run
        self._busy = 0  # runs being started or continued (is_idle is False meanwhile)
        self._sending: set[asyncio.Future[None]] = set()  # send_user_message calls not yet queued or started
        self.stream_fn = parts.stream_fn or provider_stream_fn(registry)
        self.bus = EventBus(plugins)
        self.ext = ExtensionContext(self, bus=self.bus)
        self.hooks = hooks = LoopHooks(plugins, self.ext)
        self.agent = Agent(
            stream_fn=self.stream_fn,
            system_prompt=config.system_prompt,
            model=config.model,
            thinking_level=config.thinking_level,
            tools=config.tools,
            messages=parts.messages,
            before_tool_call=hooks.before_tool_call,
            after_tool_call=hooks.after_tool_call,
            transform_context=hooks.transform_context,
            get_api_key=self._api_key,
            steering_mode=config.steering_mode,  # type: ignore[arg-type]
            follow_up_mode=config.follow_up_mode,  # type: ignore[arg-type]
            options=StreamOptions(thinking_budgets=parts.settings.thinking_budgets if parts.settings else None,
                                  **hooks.stream_options()),
            cwd=config.cwd,
            tool_settings=config.tool_settings if config.tool_settings.output_dir is not None
            else replace(config.tool_settings, output_dir=self.full_output_dir),
            convert_to_llm=parts.convert_to_llm or default_convert_to_llm,
            # The session file's id; in memory (--no-session) one random id per process, as Pi sends.
            session_id=lambda: str(self.store.session_id or "") if self.store is not None else "",
            arguments=PI_ARGUMENTS,
        )
        self.agent.subscribe(self._on_agent_event)
        self.retries = RetryingRuns(self.agent)
        self.agent.extension = self.ext
        plugins.error_listeners.append(self._on_extension_error)
        self.plugin_commands = PluginCommands(plugins)
        self.model_access = parts.model_access or NoModels()
        if self.compactor is not None:
            self.compactor.subscribe(self.emit_later)
            self.compactor.use_hook(hooks.before_compact)

    def set_ui(self, ui: UI, mode: str | None = None) -> None:
        """Install the mode's UI (interactive, RPC client) and name the mode (``ctx.mode``)."""
        self.ext.bind(ui, mode or ("rpc" if ui.has_ui else self.ext.mode))

    def on_shutdown_request(self, handler: Callable[[], None]) -> None:
        """A mode that can quit on request (interactive, RPC) registers how; plugins ask via ``ctx.shutdown()``."""
        self._shutdown_requests.append(handler)

    def on_plugins_renewed(self, handler: Callable[[], None]) -> Callable[[], None]:
        """A front end that keeps what plugins contributed (renderers, shortcuts, a command menu) registers how
        to collect it again: called when the session was replaced or reloaded and a plugin's contributions may
        have changed (a class plugin's new instance), before the plugins' ``pi_session_start``. Returns the
        call that removes ``handler``."""
        self._renewal_handlers.append(handler)
        return lambda: self._renewal_handlers.remove(handler)

    def request_shutdown(self) -> None:
        for handler in list(self._shutdown_requests):
            handler()

    # --- plugins ----------------------------------------------------------------------------------

    def _on_extension_error(self, error: ExtensionError) -> None:
        self.emit_later(AgentEvent("extension_error", extension_path=error.source, plugin=error.plugin,
                                   event=error.hook.removeprefix("pi_"), error=error.text,
                                   error_type=type(error.error).__name__))

    @property
    def commands(self) -> dict[str, SlashCommand]:
        return self.plugin_commands.items

    def command_infos(self) -> list[CommandInfo]:
        """``ctx.get_commands()`` / RPC ``get_commands``: plugin commands, then templates, then skills."""
        resources = self.resources
        return self.plugin_commands.infos() + (resources.command_infos() if resources is not None else [])

    async def run_command(self, name: str, args: str) -> bool:
        """Run plugin command ``/name``; False when no plugin has it (``PluginCommands.run``)."""
        return await self.plugin_commands.run(name, args,
                                              lambda plugin: self.ext.for_plugin(plugin).as_command_context())

    async def start(self, reason: str = "startup", previous_session_file: str | None = None) -> None:
        renewed = instances.start_session(self.plugins, self)  # class plugins: a fresh instance per session
        ended, self._ended = self._ended, []
        if reason in ("startup", "reload"):  # after a reload, re-imported plugin files' handlers replace the old
            await self._bind_handlers()
        elif renewed or ended:  # the session was replaced: the new instances' tools, commands and handlers,
            # and none left of an instance that ended (also when its successor's constructor raised)
            await self._bind_handlers(set(renewed))
            self.plugin_commands.collect()
            await self.refresh_tools()
        if reason == "reload" or renewed or ended:  # providers, and what front ends draw with: the live plugins'
            self.renew(self.registry.providers, keyed(self.plugins, await self.plugins.call("pi_providers"),
                                                      "provider", "api"))
            self.renew(self.registry.renderers, keyed(self.plugins, await self.plugins.call("pi_renderers"),
                                                      "renderer", "tool_name"))
            for handler in list(self._renewal_handlers):
                handler()
        await self._call("pi_session_start", reason=reason, previous_session_file=previous_session_file)
        if reason in ("startup", "reload"):
            await self._discover_resources(reason)

    async def _bind_handlers(self, only: set[str] | None = None) -> None:
        for plugin, handlers in await self.plugins.call("pi_event_handlers"):
            if only is None or plugin in only:
                self.bus.drop_plugin(plugin)
                for channel, handler in handlers.items():
                    self.bus.on(channel, handler, plugin)

    async def shutdown(self, reason: str = "quit", target_session_file: str | None = None) -> None:
        await self._call("pi_session_shutdown", reason=reason, target_session_file=target_session_file)
        self._ended = instances.end_session(self.plugins, self)  # its hooks and handlers end with the session
        for plugin in self._ended:
            self.bus.drop_plugin(plugin)
        if self.cache_warmer is not None and reason != "reload":
            self.cache_warmer.cancel()
        if reason == "quit" and self.listeners.background:
            await asyncio.wait(set(self.listeners.background), timeout=5)

    async def _discover_resources(self, reason: str) -> None:
        found = await self._call("pi_resources_discover", cwd=self.cwd, reason=reason)
        if found and self.prompt_source is not None:
            for plugin, paths in found:
                self.prompt_source.add_resource_paths(plugin, paths.skill_paths, paths.prompt_paths, paths.theme_paths)
            self._rebuild_prompt()

    async def reload(self) -> None:
        """``/reload``: re-read settings, context files, skills and templates, import plugin files again
        (``SessionParts.reimport``), collect every plugin's contributions again; rebuild the system prompt."""
        await self.shutdown("reload")
        if self.settings is not None:
            self.settings.reload()
            self.agent.options.thinking_budgets = self.settings.thinking_budgets
        if self.prompt_source is not None:
            self.prompt_source.reload()
        self.reimport(self.plugins)
        instances.start_session(self.plugins, self)  # before collecting: the class plugins' new instances
        self.plugin_commands.collect()
        await self.refresh_tools()
        self._rebuild_prompt()
        await self.start("reload")

    # --- events -----------------------------------------------------------------------------------

    def subscribe(self, listener: SessionListener) -> Callable[[], None]:
        return self.listeners.subscribe(listener)

    def _to_plugins(self, event: AgentEvent) -> Awaitable[Any] | None:
        return self._call("pi_agent_event", event=event) if self.plugins.has("pi_agent_event") else None

    async def _on_agent_event(self, event: AgentEvent, signal: AbortSignal | None) -> None:
        if event.type == "message_end":
            self._save(event.message)
        if event.type == "message_start" and isinstance(event.message, UserMessage):
            update = self._queue_event()  # a queued message is being delivered: the queue shrinks first
            if update is not None:
                await self.listeners.emit(update)
        await self.listeners.emit(event)

    def _save(self, message: AgentMessage | dict[str, Any]) -> None:
        """Append to the session file; a full disk must not cost the user the answer on screen."""
        try:
            self.store.append_message(message)
        except OSError as err:
            if not self._save_failed:
                self._save_failed = True
                sys.stderr.write(f"Warning: could not save the session ({err.strerror or err}); "
                                 "the conversation goes on but is not being recorded\n")

    def _api_key(self, provider: str) -> str | None:
        if self.config.api_key:
            return self.config.api_key
        if self.models is not None and self.agent.state.model is not None:
            return self.models.api_key_for(self.agent.state.model)
        return None

    # --- prompting --------------------------------------------------------------------------------

    def _user_message(self, text: str, images: list[ImageContent] | None) -> UserMessage:
        return UserMessage(content=[TextContent(text=text), *(images or [])])

    async def prompt(self, text: str, images: list[ImageContent] | None = None, *,
                     streaming_behavior: str | None = None, source: str = "print", expand: bool = True,
                     prepared: Callable[[], object] = lambda: None) -> str:
        """The input pipeline (docs/config.md#input-pipeline): commands, input hook, expansion, run or queue.
        While a run is active (streaming, or starting or continuing) the text is queued.

        Returns what became of the text (Pi 1.6.0's ``disposition``): ``"handled"`` by a plugin command or
        input hook, ``"queued"`` as steering or follow-up, or ``"started"`` (a run, now settled).
        ``prepared`` is called before a plugin command runs and before a run starts."""
        if expand and text.startswith("/"):
            name, _, rest = text[1:].partition(" ")
            if name in self.commands:
                prepared()
            if await self.run_command(name, rest.strip()):
                return "handled"
        outcome = await self.hooks.input(text, images, source=source, streaming_behavior=streaming_behavior
                                         if self.is_streaming or self._busy else None)
        if outcome is None:
            return "handled"
        text, images = outcome
        if expand:
            text = self.expand_input(text)
        if self.is_streaming or self._busy:
            if streaming_behavior == "steer":
                self.steer(text, images, expanded=True)
                return "queued"
            if streaming_behavior == "followUp":
                self.follow_up(text, images, expanded=True)
                return "queued"
            raise PiError("Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') "
                          "to queue the message.")
        self.check_ready()
        prepared()
        await self._start_run(self._user_message(text, images), prompt=text, images=images)
        return "started"

    def send_user_message(self, text: str, images: list[ImageContent] | None, *, deliver_as: str | None,
                          expand: bool) -> asyncio.Task[str]:
        """``ctx.send_user_message``: ``prompt`` (source "extension") as a task. A run ending before the text is
        queued waits for it, so a follow-up sent from ``agent_end`` continues that run (Pi's "more work?")."""
        pending: asyncio.Future[None] = asyncio.get_running_loop().create_future()  # cancelled: no longer pending
        self._sending.add(pending)
        pending.add_done_callback(self._sending.discard)
        task = asyncio.ensure_future(self.prompt(text, images, streaming_behavior=deliver_as, source="extension",
                                                 expand=expand, prepared=pending.cancel))
        task.add_done_callback(lambda _task: pending.cancel())
        return task

    async def _start_run(self, first: AgentMessage, *, prompt: str = "", images: list[ImageContent] | None = None,
                         message_type: str = "user") -> None:
        self._busy += 1
        try:
            messages: list[AgentMessage] = [first, *self._next_turn]
            self._next_turn = []
            base_prompt = self.agent.state.system_prompt
            if self.plugins.has("pi_before_agent_start"):
                chosen, extra = await self.hooks.before_agent_start(
                    first, prompt=prompt, system_prompt=base_prompt, images=images, message_type=message_type,
                    options=self.system_prompt_options(), rebuild=self._prompt_for)
                messages.extend(extra)
                self.agent.state.system_prompt = chosen
            self.release_held_back()
            await self._check_compaction(skip_aborted=False)
            if self.compactor is not None:
                self.compactor.reset_overflow_guard()
        except BaseException:
            self._busy -= 1
            raise
        try:
            await self._run_agent(lambda: self.agent.prompt(messages))
            while await self._more_work():
                await self._run_agent(self.agent.continue_)  # queued from agent_end/turn_end
        finally:
            self.agent.state.system_prompt = base_prompt
            self._busy -= 1
            await self.listeners.emit(AgentEvent("agent_settled", aborted=_aborted(self.last_assistant())))

    async def _more_work(self) -> bool:
        """Once a run ends: user messages plugins are sending are queued first; anything queued continues the
        run unless it was aborted."""
        while self._sending:
            await asyncio.wait(self._sending)
        return self.agent.has_queued_messages() and not _aborted(self.last_assistant())

    def send_custom_message(self, custom_type: str, content: Any, *, display: bool = True, details: Any = None,  # open: plugin-defined content and details, stored in the session JSON
                            deliver_as: str | None = None, trigger_turn: bool = False) -> None:
        """A plugin's message (docs/plugins.md#messages-from-plugins): queued, kept for the next prompt, or
        recorded; with ``trigger_turn`` an idle session starts a run from it."""
        message = custom_message({"customType": custom_type, "content": content, "display": display, "details": details})
        if deliver_as == "nextTurn":
            self._next_turn.append(message)
        elif self.is_streaming or self._busy:
            (self.agent.follow_up if deliver_as == "followUp" else self.agent.steer)(message)
            self.queue_changed()
        elif trigger_turn:
            self.listeners.later(self._start_run(message, message_type="custom"))
        else:
            self.agent.state.messages.append(message)
            self.store.append_custom_message_entry(custom_type, content, display, details)
            for kind in ("message_start", "message_end"):  # the modes show it now; plugins are not told (as Pi)
                self.listeners.emit_later(AgentEvent(kind, message=message), forward=False)

    def record_user_bash(self, message: dict[str, Any]) -> None:  # open: a bashExecution message as Pi's JSON
        """A user's own ``!cmd`` result joins the context now, or after the run when the agent is streaming
        (a message must not land in the middle of a turn)."""
        if self.is_streaming:
            self._held_back.append(message_from_json(message))
            return
        self.agent.state.messages.append(message_from_json(message))
        self.store.append_message(message)

    def release_held_back(self) -> None:
        """Move user bash results that arrived during the last run into the context."""
        held, self._held_back = self._held_back, []
        for message in held:
            self.agent.state.messages.append(message)
            self.store.append_message(message)

    def check_ready(self) -> None:
        model = self.agent.state.model
        if model is None or model.id == "unknown":
            from pi_core.config_paths import models_toml_path

            raise PiError("No model selected. Set a provider's API key (e.g. ANTHROPIC_API_KEY or OPENAI_API_KEY) or "
                          f"use /login, or add models to {models_toml_path()}; then choose one with /model.")
        self._api_key(model.provider)  # raises MissingApiKey, naming the variable to set

    def steer(self, text: str, images: list[ImageContent] | None = None, *, expanded: bool = False) -> None:
        self.agent.steer(self._user_message(text if expanded else self.expand_input(text), images))
        self.queue_changed()

    def follow_up(self, text: str, images: list[ImageContent] | None = None, *, expanded: bool = False) -> None:
        self.agent.follow_up(self._user_message(text if expanded else self.expand_input(text), images))
        self.queue_changed()

    def _queue_event(self) -> AgentEvent | None:
        """A ``queue_update`` when the queues' texts changed since the last one, else None."""
        def texts(queue: list[AgentMessage]) -> list[str]:
            return [m.text() if isinstance(m, UserMessage) else "" for m in queue]

        current = (texts(self.agent.steering_queue), texts(self.agent.follow_up_queue))
        if current == self._queue_texts:
            return None
        self._queue_texts = current
        return AgentEvent("queue_update", steering=current[0], follow_up=current[1])

    def queue_changed(self) -> None:
        """Announce the queues (``queue_update``) if they changed; front ends call it after clearing them."""
        event = self._queue_event()
        if event is not None:
            self.listeners.later(self.listeners.emit(event))

    async def abort(self) -> None:
        self.request_abort()
        await self.agent.wait_for_idle()

    def request_abort(self) -> None:
        """Abort from synchronous code: the run stops; ``await abort()`` also waits for it."""
        self.abort_retry()
        self.agent.abort()

    def abort_retry(self) -> None:
        self.retries.cancel()

    async def wait_for_idle(self) -> None:
        while not self.is_idle:
            await self.agent.wait_for_idle()
            await asyncio.sleep(0.02)

    # --- runs with auto-retry and auto-compaction (docs/sessions.md#auto-retry, docs/sessions.md#triggers)

    async def _run_agent(self, start: Callable[[], Awaitable[None]]) -> None:
        """Run with agent-level retry (``RetryingRuns``), then check for compaction."""
        if await self.retries.run(start, self.retry):
            await self._check_compaction(skip_aborted=True)

    async def _check_compaction(self, *, skip_aborted: bool) -> None:
        """Auto-compaction (``Compaction.after_turn``); it may ask to continue at once (retry, queued messages)."""
        if self.auto_compaction and self.compactor is not None and \
                await self.compactor.after_turn(self, skip_aborted=skip_aborted):
            await asyncio.sleep(0.1)
            await self._run_agent(self.agent.continue_)

    async def stop_run(self) -> None:
        """Before the session file changes: held-back bash results join the context, a run is aborted."""
        self.release_held_back()
        if self.is_streaming:
            await self.abort()

    def reset_agent(self, messages: list[AgentMessage]) -> None:
        self.agent.reset()
        self.agent.state.messages = messages
        self._held_back.clear()

    def reload_messages(self) -> None:
        """The agent's context again from the store's current branch (after it was rewritten)."""
        self.agent.state.messages = self.store.build_session_context().typed_messages()

    # --- the session file: new, switch, fork, clone, tree, compact (pi_core.control.session_files) ----

    def _files(self) -> SessionFileOps:
        if self.files is None:
            raise PiError("Session-file operations are not available in this session")
        return self.files

    async def new_session(self, parent_session: str | None = None, *,
                          setup: Callable[[SessionStore], object] | None = None) -> bool:
        return await self._files().new_session(self, parent_session, setup=setup)

    async def switch_session(self, session_path: str) -> bool:
        return await self._files().switch_session(self, session_path)

    async def fork(self, entry_id: str) -> tuple[str, bool]:
        return await self._files().fork(self, entry_id)

    async def clone(self) -> bool:
        return await self._files().clone(self)

    async def navigate_tree(self, target_id: str | None, *, summarize: bool = False,
                            custom_instructions: str | None = None, replace_instructions: bool = False,
                            label: str | None = None) -> TreeMove | None:
        return await self._files().navigate_tree(self, target_id, summarize=summarize,
                                                 custom_instructions=custom_instructions,
                                                 replace_instructions=replace_instructions, label=label)

    async def compact(self, custom_instructions: str | None = None) -> CompactionResult:
        return await self._files().compact(self, custom_instructions)

    def compact_later(self, custom_instructions: str | None, on_complete: Callable[[CompactionResult], object] | None,
                      on_error: Callable[[BaseException], object] | None) -> asyncio.Task[object]:
        return self._files().compact_later(self, custom_instructions, on_complete, on_error)


def _aborted(message: AssistantMessage | None) -> bool:
    return message is not None and message.stop_reason == "aborted"
