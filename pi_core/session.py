"""AgentSession: one coding-agent session, the object every mode (print, JSON, RPC, interactive) drives.

It binds an Agent to the plugins (tools, providers, tool-call hooks), the chosen model and key, the
system prompt and the session file. Modes subscribe to its events and call ``prompt`` / ``steer`` /
``follow_up`` / ``abort``; everything else (which provider serves a model, persistence, hook calls)
happens here.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pi_core.agent import Agent
from pi_core.errors import PiError, ToolError
from pi_core.events import AgentEvent
from pi_core.plugins import PluginSet
from pi_core.providers import StreamOptions
from pi_core.recovery import Recovery
from pi_core.registry import Registry, call_each
from pi_core.signals import AbortSignal
from pi_core.tools import AfterToolCall, BeforeToolCall, Tool, ToolCallInfo, ToolPolicy, ToolResult
from pi_core.types import (
    THINKING_LEVELS,
    AgentMessage,
    AssistantMessage,
    AssistantMessageEvent,
    Context,
    ImageContent,
    Model,
    TextContent,
    UserMessage,
)

SessionListener = Callable[[AgentEvent], Any]


def provider_stream_fn(registry: Registry, *, retry: Any = None,
                       on_retry: Callable[[Any], Any] | None = None) -> Callable[..., AsyncIterator[AssistantMessageEvent]]:
    """A loop ``stream_fn`` that sends each request to the plugin serving ``model.api``."""

    async def stream(model: Model, context: Context, options: StreamOptions) -> AsyncIterator[AssistantMessageEvent]:
        provider = registry.providers.items.get(model.api)
        if provider is None:
            failed = AssistantMessage(api=model.api, provider=model.provider, model=model.id, stop_reason="error",
                                      error_message=f"No API provider registered for api: {model.api}")
            yield AssistantMessageEvent(type="error", reason="error", error=failed)
            return
        if retry is not None:
            from pi_core.llm.retry import stream_with_retry

            async for event in stream_with_retry(provider, model, context, options, retry, on_retry=on_retry):
                yield event
        else:
            async for event in provider.stream(model, context, options):
                yield event

    return stream


@dataclass
class SessionConfig:
    cwd: Path
    model: Model | None
    thinking_level: str = "off"
    tools: list[Tool] = field(default_factory=list)  # active tools, in activation order
    all_tools: dict[str, Tool] = field(default_factory=dict)  # the registry after --tools filtering
    system_prompt: str = ""
    api_key: str | None = None
    steering_mode: str = "one-at-a-time"
    follow_up_mode: str = "one-at-a-time"
    tool_policy: ToolPolicy | None = None  # --tools / --exclude-tools, for tools added at run time


class AgentSession(Recovery):
    def __init__(self, config: SessionConfig, *, plugins: PluginSet, registry: Registry,
                 stream_fn: Callable[..., AsyncIterator[AssistantMessageEvent]] | None = None,
                 api_key_for: Callable[[Model], str | None] | None = None,
                 store: Any = None, messages: list[AgentMessage] | None = None,
                 prompt_builder: Callable[[list[Tool]], str] | None = None,
                 expand_input: Callable[[str], str] | None = None,
                 convert_to_llm: Callable[[list[AgentMessage]], list[Any]] | None = None,
                 retry: Any = None) -> None:
        self.config = config
        self.plugins = plugins
        self.registry = registry
        if store is None:  # Pi always has a session manager; --no-session only keeps it in memory
            from pi_core.sessions.manager import SessionManager

            store = SessionManager.in_memory(config.cwd)
        self.store = store
        self.api_key_for = api_key_for
        self.prompt_builder = prompt_builder
        self.expand_input = expand_input or (lambda text: text)
        self._listeners: list[SessionListener] = []
        self.models: Any = None  # the ModelRegistry, when built by startup
        self.resources: Any = None
        self.settings: Any = None  # pi_core.app.settings.Settings, when built by startup
        self.quiet_startup = False  # interactive mode: no start-up header (quietStartup, unless --verbose)
        self.scoped_models: list[Any] = []  # --models / enabledModels, for cycling
        self.shutdown_handler: Callable[[], None] | None = None  # set by modes that can quit on request
        self.reloader: Callable[[], None] | None = None  # re-reads context files, skills, templates
        self._queue_texts: tuple[list[str], list[str]] = ([], [])
        self._save_failed = False
        from pi_core.sessions.messages import llm_converter

        self.agent = Agent(
            stream_fn=stream_fn or provider_stream_fn(registry, retry=retry),
            convert_to_llm=convert_to_llm or llm_converter(block_images=False),
            system_prompt=config.system_prompt,
            model=config.model,
            thinking_level=config.thinking_level,
            tools=config.tools,
            messages=messages or [],
            before_tool_call=self._before_tool_call,
            after_tool_call=self._after_tool_call,
            get_api_key=self._api_key,
            steering_mode=config.steering_mode,  # type: ignore[arg-type]
            follow_up_mode=config.follow_up_mode,  # type: ignore[arg-type]
            cwd=config.cwd,
        )
        self.agent.subscribe(self._on_agent_event)
        from pi_core.extension import ExtensionContext

        self.ext = ExtensionContext(self)
        self.agent.tool_env["pi"] = self.ext
        self._next_turn: list[AgentMessage] = []  # custom messages attached to the next prompt
        self.commands = self._collect_commands()
        self.retry_settings: Any = None  # pi_core.app.settings.RetrySettings: agent-layer auto-retry
        self._compactor: Any = None
        self._ops: Any = None
        self.auto_compaction = True
        self.is_compacting = False
        self._retry_cancel: AbortSignal | None = None

    @property
    def ops(self) -> Any:
        """Session commands shared by RPC, the interactive UI and plugins (pi_core.control.session_ops)."""
        if self._ops is None:
            from pi_core.control.session_ops import SessionOps

            self._ops = SessionOps(self)
        return self._ops

    def set_ui(self, ui: Any) -> None:
        """Install the mode's UI (interactive, RPC client); print mode keeps the defaults."""
        self.ext.ui = ui

    # --- plugin lifecycle -------------------------------------------------------------------------

    def _collect_commands(self) -> dict[str, Any]:
        commands: dict[str, Any] = {}
        for _plugin, values in call_each(self.plugins, "pi_commands"):
            for command in values:
                commands[command.name] = command
        return commands

    async def _call_hook(self, hook: str, **kwargs: Any) -> list[tuple[str, Any]]:
        """Call a lifecycle hook plugin by plugin; a raising plugin is reported, not fatal."""
        results: list[tuple[str, Any]] = []
        for plugin_name, impl in self.plugins.ordered_impls(hook):
            args = {k: v for k, v in kwargs.items() if k in impl.argnames}  # type: ignore[attr-defined]
            try:
                value = impl.function(**args)  # type: ignore[attr-defined]
                if asyncio.iscoroutine(value):
                    value = await value
            except Exception as err:  # noqa: BLE001 - an extension error must not end the session
                await self._emit(AgentEvent("extension_error", extension_path=self._plugin_source(plugin_name),
                                            event=hook.removeprefix("pi_"), error=str(err) or type(err).__name__))
                continue
            if value is not None:
                results.append((plugin_name, value))
            if hook == "pi_input" and getattr(value, "action", None) == "transform":
                kwargs["text"] = value.text
            if hook == "pi_before_agent_start" and getattr(value, "system_prompt", None):
                kwargs["system_prompt"] = value.system_prompt
        return results

    def _plugin_source(self, plugin_name: str) -> str:
        info = self.plugins.info.get(plugin_name)
        return info.source if info else plugin_name

    async def reload(self) -> None:
        """``/reload``: re-read settings, context files, skills and templates; rebuild the system prompt."""
        await self.shutdown("reload")
        if self.settings is not None:
            self.settings.reload()
        if self.reloader is not None:
            self.reloader()
        if self.prompt_builder is not None:
            self.agent.state.system_prompt = self.prompt_builder(self.agent.state.tools)
        await self.start("reload")

    async def start(self, reason: str = "startup") -> None:
        await self._call_hook("pi_session_start", ctx=self.ext, reason=reason)

    async def shutdown(self, reason: str = "quit") -> None:
        await self._call_hook("pi_session_shutdown", ctx=self.ext, reason=reason)

    # --- events -----------------------------------------------------------------------------------

    def subscribe(self, listener: SessionListener) -> Callable[[], None]:
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    async def _on_agent_event(self, event: AgentEvent, signal: AbortSignal | None) -> None:
        if event.type == "message_end":
            self._save(event.message)
        await self._emit(event)
        if event.type == "message_start" and isinstance(event.message, UserMessage):
            self._queue_changed()  # a queued message was just delivered
        if self.plugins.pm.hook.pi_agent_event.get_hookimpls():
            await self._call_hook("pi_agent_event", ctx=self.ext, event=event)

    def _save(self, message: AgentMessage) -> None:
        """Append to the session file; a full disk must not cost the user the answer on screen."""
        try:
            self.store.append_message(message)
        except OSError as err:
            if not self._save_failed:
                self._save_failed = True
                sys.stderr.write(f"Warning: could not save the session ({err.strerror or err}); "
                                 "the conversation goes on but is not being recorded\n")

    async def _emit(self, event: AgentEvent) -> None:
        for listener in list(self._listeners):
            outcome = listener(event)
            if asyncio.iscoroutine(outcome):
                await outcome

    def emit_later(self, event: AgentEvent) -> None:
        """Emit from synchronous code (the compactor): async listeners are scheduled, not awaited."""
        for listener in list(self._listeners):
            outcome = listener(event)
            if asyncio.iscoroutine(outcome):
                asyncio.get_running_loop().create_task(outcome)

    # --- hooks ------------------------------------------------------------------------------------

    async def _before_tool_call(self, info: ToolCallInfo, signal: AbortSignal) -> BeforeToolCall | None:
        for plugin_name, impl in self.plugins.ordered_impls("pi_before_tool_call"):
            try:
                decision = impl.function(call=info)  # type: ignore[attr-defined]
                if asyncio.iscoroutine(decision):
                    decision = await decision
            except ToolError as err:
                return BeforeToolCall(block=True, reason=str(err))
            if decision is None:
                continue
            if decision.block:
                return decision
            if decision.args is not None:
                info.args = decision.args
        return None

    def _after_tool_call(self, info: ToolCallInfo, result: ToolResult, is_error: bool,
                         signal: AbortSignal) -> AfterToolCall | None:
        merged: AfterToolCall | None = None
        for plugin_name, impl in self.plugins.ordered_impls("pi_after_tool_call"):
            change = impl.function(call=info, result=result, is_error=is_error)  # type: ignore[attr-defined]
            if change is None:
                continue
            result = ToolResult(
                content=change.content if change.content is not None else result.content,
                details=change.details if change.details is not None else result.details,
                terminate=change.terminate if change.terminate is not None else result.terminate,
            )
            is_error = change.is_error if change.is_error is not None else is_error
            merged = AfterToolCall(content=result.content, details=result.details, is_error=is_error,
                                   terminate=result.terminate)
        return merged

    def _api_key(self, provider: str) -> str | None:
        if self.config.api_key:
            return self.config.api_key
        if self.api_key_for is not None and self.agent.state.model is not None:
            return self.api_key_for(self.agent.state.model)
        return None

    # --- state ------------------------------------------------------------------------------------

    @property
    def model(self) -> Model:
        return self.agent.state.model

    @property
    def messages(self) -> list[AgentMessage]:
        return self.agent.state.messages

    @property
    def is_streaming(self) -> bool:
        return self.agent.state.is_streaming

    @property
    def active_tools(self) -> list[Tool]:
        return list(self.agent.state.tools)

    def set_active_tools(self, names: list[str]) -> None:
        unknown = [n for n in names if n not in self.config.all_tools]
        if unknown:
            raise PiError(f"Unknown tool(s): {', '.join(unknown)}. Known: {', '.join(self.config.all_tools)}")
        policy = self.config.tool_policy
        tools = [self.config.all_tools[n] for n in dict.fromkeys(names)]
        self.agent.state.tools = [t for t in tools if policy is None or policy.may_declare(t)]
        self._rebuild_prompt()

    def add_tools(self, tools: list[Tool]) -> list[str]:
        """Make tools available while the session runs, e.g. as a server connects; a tool of the same name
        is replaced. The user's selection applies: excluded tools are skipped, and a ``direct`` tool it lets
        be declared becomes active from the next model request. Returns the names added."""
        policy = self.config.tool_policy
        added: list[str] = []
        active = list(self.agent.state.tools)
        positions = {t.name: i for i, t in enumerate(active)}
        for tool in tools:
            if policy is not None and not policy.allows(tool.name):
                continue
            self.config.all_tools[tool.name] = tool
            added.append(tool.name)
            declarable = policy is None or policy.may_declare(tool)
            if tool.name in positions:
                if declarable:
                    active[positions[tool.name]] = tool
            elif tool.exposure == "direct" and declarable:
                positions[tool.name] = len(active)
                active.append(tool)
        self.agent.state.tools = [t for t in active if policy is None or policy.may_declare(t)]
        if added:
            self._rebuild_prompt()
        return added

    def remove_tools(self, names: Iterable[str]) -> None:
        """Withdraw tools added with ``add_tools`` (their server went away): no longer declared or callable."""
        gone = {n for n in names if n in self.config.all_tools}
        if not gone:
            return
        for name in gone:
            del self.config.all_tools[name]
        self.agent.state.tools = [t for t in self.agent.state.tools if t.name not in gone]
        self._rebuild_prompt()

    def _rebuild_prompt(self) -> None:
        if self.prompt_builder is not None:
            self.agent.state.system_prompt = self.prompt_builder(self.agent.state.tools)

    def set_model(self, model: Model) -> None:
        self.agent.state.model = model
        self.store.append_model_change(model.provider, model.id)

    def set_thinking_level(self, level: str) -> None:
        if level not in THINKING_LEVELS:
            raise PiError(f'Invalid thinking level "{level}". Valid values: {", ".join(THINKING_LEVELS)}')
        self.agent.state.thinking_level = level
        self.store.append_thinking_level_change(level)

    # --- prompting --------------------------------------------------------------------------------

    def _user_message(self, text: str, images: list[ImageContent] | None) -> UserMessage:
        return UserMessage(content=[TextContent(text=text), *(images or [])])

    async def prompt(self, text: str, images: list[ImageContent] | None = None, *,
                     streaming_behavior: str | None = None, source: str = "print", expand: bool = True) -> None:
        """The input pipeline (config.md §8): commands, the input hook, expansion, then run or queue."""
        if expand and text.startswith("/"):
            name, _, rest = text[1:].partition(" ")
            command = self.commands.get(name)
            if command is not None:
                outcome = command.handler(rest.strip(), self.ext)
                if asyncio.iscoroutine(outcome):
                    await outcome
                return
        if expand:
            for _plugin, result in await self._call_hook("pi_input", ctx=self.ext, text=text, source=source):
                if result.action == "handled":
                    return
                if result.action == "transform" and result.text is not None:
                    text, images = result.text, result.images if result.images is not None else images
            text = self.expand_input(text)
        if self.is_streaming:
            if streaming_behavior == "steer":
                self.steer(text, images, expanded=True)
                return
            if streaming_behavior == "followUp":
                self.follow_up(text, images, expanded=True)
                return
            raise PiError("Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') "
                          "to queue the message.")
        self.check_ready()
        messages: list[AgentMessage] = [self._user_message(text, images), *self._next_turn]
        self._next_turn = []
        base_prompt = self.agent.state.system_prompt
        for _plugin, result in await self._call_hook("pi_before_agent_start", ctx=self.ext, prompt=text,
                                                      system_prompt=base_prompt):
            if result.message:
                messages.append(_custom(result.message))
            if result.system_prompt:
                self.agent.state.system_prompt = result.system_prompt
        self.ops.bash.flush_pending()  # user bash results held back during the last run
        await self._check_compaction(skip_aborted=False)
        self.compactor.reset_overflow_guard()
        try:
            await self._run_agent(lambda: self.agent.prompt(messages))
        finally:
            self.agent.state.system_prompt = base_prompt

    def send_custom_message(self, custom_type: str, content: Any, *, display: bool = True, details: Any = None,
                            deliver_as: str | None = None) -> None:
        """A plugin's message (config.md §9.1 sendMessage): queued, kept for the next prompt, or recorded."""
        message = _custom({"customType": custom_type, "content": content, "display": display, "details": details})
        if deliver_as == "nextTurn":
            self._next_turn.append(message)
        elif self.is_streaming:
            (self.agent.follow_up if deliver_as == "followUp" else self.agent.steer)(message)
            self._queue_changed()
        else:
            self.agent.state.messages.append(message)
            self.store.append_custom_message_entry(custom_type, content, display, details)

    def check_ready(self) -> None:
        model = self.agent.state.model
        if model is None or model.id == "unknown":
            raise PiError("No model selected.")
        if not self._api_key(model.provider) and self.api_key_for is not None:
            from pi_core.models.env_keys import env_var_names

            names = env_var_names(model.provider)
            hint = f" Set {' or '.join(names)}, or pass --api-key." if names else " Pass --api-key."
            raise PiError(f"No API key found for {model.provider}.{hint}")

    def steer(self, text: str, images: list[ImageContent] | None = None, *, expanded: bool = False) -> None:
        self.agent.steer(self._user_message(text if expanded else self.expand_input(text), images))
        self._queue_changed()

    def follow_up(self, text: str, images: list[ImageContent] | None = None, *, expanded: bool = False) -> None:
        self.agent.follow_up(self._user_message(text if expanded else self.expand_input(text), images))
        self._queue_changed()

    def _queue_changed(self) -> None:
        def texts(queue: list[AgentMessage]) -> list[str]:
            return [m.text() if isinstance(m, UserMessage) else "" for m in queue]

        current = (texts(self.agent.steering_queue), texts(self.agent.follow_up_queue))
        if current == self._queue_texts:
            return
        self._queue_texts = current
        event = AgentEvent("queue_update", steering=current[0], follow_up=current[1])
        try:
            asyncio.get_running_loop().create_task(self._emit(event))
        except RuntimeError:
            pass  # no loop running: nobody can be listening

    async def abort(self) -> None:
        if self._retry_cancel is not None:
            self._retry_cancel.abort()
        self.agent.abort()
        await self.agent.wait_for_idle()

    async def wait_for_idle(self) -> None:
        await self.agent.wait_for_idle()

    def last_assistant(self) -> AssistantMessage | None:
        for message in reversed(self.messages):
            if isinstance(message, AssistantMessage):
                return message
        return None


def _custom(data: dict[str, Any]) -> AgentMessage:
    from pi_core.types import CustomMessage

    fields = {k: v for k, v in data.items() if v is not None}
    return CustomMessage(role="custom", **fields)
