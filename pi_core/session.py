"""AgentSession: one coding-agent session, the object every mode (print, JSON, RPC, interactive) drives.

It binds an Agent to the plugins (tools, providers, tool-call hooks), the chosen model, the system prompt
and the session file. Everything it works with is handed in when it is built (``SessionParts``): the
store that records it, the models and their keys, settings, the system-prompt source, the compactor and
the retry policy. Modes subscribe to its events and call ``prompt`` / ``steer`` / ``follow_up`` /
``abort``; front-end commands (RPC state, cycling models, export) live in ``pi_core.control``, which wraps
a session.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

from pi_core.agent import Agent
from pi_core.errors import PiError, ToolError
from pi_core.events import AgentEvent
from pi_core.extension import UI, ExtensionContext
from pi_core.providers import ApiProvider, StreamOptions
from pi_core.registry import PluginSet, Registry, call_each
from pi_core.signals import AbortSignal
from pi_core.tools import (
    AfterToolCall,
    BeforeToolCall,
    Tool,
    ToolCallInfo,
    ToolPolicy,
    ToolResult,
    ToolSettings,
)
from pi_core.types import (
    THINKING_LEVELS,
    AgentMessage,
    AssistantMessage,
    AssistantMessageEvent,
    Context,
    CustomMessage,
    ImageContent,
    Model,
    ScopedModel,
    TextContent,
    UserMessage,
    clamp_thinking_level,
    message_from_json,
    supported_thinking_levels,
)

SessionListener = Callable[[AgentEvent], Any]
StreamFn = Callable[[Model, Context, StreamOptions], AsyncIterator[AssistantMessageEvent]]


# --- what a session is built from ----------------------------------------------------------------


class RebuiltContext(Protocol):
    """What a store rebuilds from the current branch (``pi_core.sessions.SessionContext``)."""

    model: dict[str, str] | None
    thinking_level: str

    def typed_messages(self) -> list[AgentMessage]: ...


class SessionStore(Protocol):
    """Where a session is recorded: ``pi_core.sessions.SessionManager`` (a JSONL file, or memory only)."""

    @property
    def session_id(self) -> str: ...
    @property
    def session_file(self) -> Path | None: ...
    @property
    def is_persisted(self) -> bool: ...
    @property
    def session_name(self) -> str | None: ...
    @property
    def leaf_id(self) -> str | None: ...
    @property
    def header(self) -> dict[str, Any]: ...

    def get_entries(self) -> list[dict[str, Any]]: ...
    def get_branch(self, from_id: str | None = None) -> list[dict[str, Any]]: ...
    def get_tree(self) -> list[Any]: ...
    def build_session_context(self) -> RebuiltContext: ...
    def append_message(self, message: Any) -> str: ...
    def append_model_change(self, provider: str, model_id: str) -> str: ...
    def append_thinking_level_change(self, level: str) -> str: ...
    def append_custom_entry(self, custom_type: str, data: Any = None) -> str: ...
    def append_custom_message_entry(self, custom_type: str, content: Any, display: bool, details: Any = None) -> str: ...
    def append_session_info(self, name: str) -> str: ...
    def new_session(self, id: str | None = None, parent_session: str | None = None) -> Path | None: ...
    def set_session_file(self, session_file: str | Path) -> None: ...
    def fork(self, entry_id: str) -> Any: ...
    def clone(self) -> Any: ...


class ModelSource(Protocol):
    """The models pi knows and their credentials: ``pi_core.models.ModelRegistry``."""

    def available_models(self) -> list[Model]: ...
    def find(self, provider: str, model_id: str) -> Model | None: ...
    def has_auth(self, provider: str) -> bool: ...
    def api_key_for(self, model: Model) -> str:
        """The key for ``model``; raises ``MissingApiKey`` naming what to set when there is none."""


class SettingsStore(Protocol):
    """Global + project settings: ``pi_core.app.settings.Settings``."""

    def get(self, key: str, default: Any = None) -> Any: ...
    def set(self, key: str, value: Any) -> None: ...
    def reload(self) -> None: ...


class PromptSource(Protocol):
    """Builds the system prompt for the active tools; ``reload`` re-reads its files (``/reload``).

    ``resources`` is what it read (``pi_core.resources.Resources``: context files, skills, templates)."""

    resources: Any

    def build(self, tools: list[Tool]) -> str: ...
    def reload(self) -> None: ...


class Compaction(Protocol):
    """Summarises old history when the context fills up: ``pi_core.compaction.Compactor``."""

    def subscribe(self, listener: Callable[[AgentEvent], Any]) -> None: ...
    def reset_overflow_guard(self) -> None: ...
    async def check(self, assistant_message: Any, model: Model | None, agent_messages: list[Any], *,
                    thinking_level: str | None = None, skip_aborted: bool = True) -> Any: ...
    async def compact(self, model: Model | None, *, thinking_level: str | None = None,
                      custom_instructions: str | None = None) -> Any: ...


class AutoRetry(Protocol):
    """Agent-level retry of retryable provider errors (``pi_core.llm.retry.AgentRetry``)."""

    enabled: bool
    max_retries: int

    def should_retry(self, message: AssistantMessage) -> bool: ...
    def delay_ms(self, attempt: int) -> int: ...


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
    scoped_models: list[ScopedModel] = field(default_factory=list)  # --models / enabledModels, for cycling
    tool_settings: ToolSettings = field(default_factory=ToolSettings)
    project_trusted: bool = True  # False: the project's protected resources were skipped (docs/config.md#project-trust)
    tool_policy: ToolPolicy | None = None  # --tools / --exclude-tools, for tools added at run time


@dataclass
class SessionParts:
    """The collaborators a session is built from. Only the store is required; the rest default to
    "not available" (no key lookup, no settings file, no compaction, no agent-level retry)."""

    store: SessionStore
    stream_fn: StreamFn | None = None  # default: the provider plugin serving ``model.api``, no retry
    models: ModelSource | None = None
    settings: SettingsStore | None = None
    prompt: PromptSource | None = None
    compactor: Compaction | None = None
    retry: AutoRetry | None = None
    messages: list[AgentMessage] = field(default_factory=list)  # the history to continue
    expand_input: Callable[[str], str] | None = None  # prompt templates and skills
    convert_to_llm: Callable[[list[AgentMessage]], list[Any]] | None = None


RequestFn = Callable[[ApiProvider, Model, Context, StreamOptions], AsyncIterator[AssistantMessageEvent]]


def provider_stream_fn(registry: Registry, request: RequestFn | None = None) -> StreamFn:
    """A loop ``stream_fn`` that sends each request to the plugin serving ``model.api``, through
    ``request`` when given (``pi_core.llm.retry.stream_with_retry`` adds request-level retries)."""

    async def stream(model: Model, context: Context, options: StreamOptions) -> AsyncIterator[AssistantMessageEvent]:
        provider = registry.providers.items.get(model.api)
        if provider is None:
            failed = AssistantMessage(api=model.api, provider=model.provider, model=model.id, stop_reason="error",
                                      error_message=f"No API provider registered for api: {model.api}")
            yield AssistantMessageEvent(type="error", reason="error", error=failed)
            return
        events = request(provider, model, context, options) if request is not None else \
            provider.stream(model, context, options)
        async for event in events:
            yield event

    return stream


class AgentSession:
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
        self.expand_input = parts.expand_input or (lambda text: text)
        self.auto_compaction = True
        self.is_compacting = False
        self._listeners: list[SessionListener] = []
        self._shutdown_requests: list[Callable[[], None]] = []
        self._queue_texts: tuple[list[str], list[str]] = ([], [])
        self._save_failed = False
        self._next_turn: list[AgentMessage] = []  # custom messages attached to the next prompt
        self._held_back: list[AgentMessage] = []  # user bash results that arrived during a run
        self._retry_cancel: AbortSignal | None = None
        agent_options: dict[str, Any] = {}
        if parts.convert_to_llm is not None:
            agent_options["convert_to_llm"] = parts.convert_to_llm
        self.agent = Agent(
            options=StreamOptions(thinking_budgets=_thinking_budgets(parts.settings)),
            stream_fn=parts.stream_fn or provider_stream_fn(registry),
            system_prompt=config.system_prompt,
            model=config.model,
            thinking_level=config.thinking_level,
            tools=config.tools,
            messages=parts.messages,
            before_tool_call=self._before_tool_call,
            after_tool_call=self._after_tool_call,
            get_api_key=self._api_key,
            steering_mode=config.steering_mode,  # type: ignore[arg-type]
            follow_up_mode=config.follow_up_mode,  # type: ignore[arg-type]
            cwd=config.cwd,
            tool_settings=config.tool_settings if config.tool_settings.output_dir is not None
            else replace(config.tool_settings, output_dir=self.full_output_dir),
            # The session file's id; in memory (--no-session) one random id per process, as Pi sends.
            session_id=lambda: str(self.store.session_id or "") if self.store is not None else "",
            **agent_options,
        )
        self.agent.subscribe(self._on_agent_event)
        self.ext = ExtensionContext(self)
        self.agent.extension = self.ext
        self.commands = self._collect_commands()
        if self.compactor is not None:
            self.compactor.subscribe(self.emit_later)

    def set_ui(self, ui: UI) -> None:
        """Install the mode's UI (interactive, RPC client); print mode keeps the defaults."""
        self.ext.ui = ui

    def on_shutdown_request(self, handler: Callable[[], None]) -> None:
        """A mode that can quit on request (interactive, RPC) registers how; plugins ask via ``ctx.shutdown()``."""
        self._shutdown_requests.append(handler)

    def request_shutdown(self) -> None:
        for handler in list(self._shutdown_requests):
            handler()

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
            self.agent.options.thinking_budgets = _thinking_budgets(self.settings)
        if self.prompt_source is not None:
            self.prompt_source.reload()
            self.agent.state.system_prompt = self.prompt_source.build(self.agent.state.tools)
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
        if event.type == "message_start" and isinstance(event.message, UserMessage):
            update = self._queue_event()  # a queued message is being delivered: the queue shrinks first
            if update is not None:
                await self._emit(update)
        await self._emit(event)
        if self.plugins.pm.hook.pi_agent_event.get_hookimpls():
            await self._call_hook("pi_agent_event", ctx=self.ext, event=event)

    def _save(self, message: AgentMessage | dict[str, Any]) -> None:
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
        """Emit from synchronous code: listeners run now; async ones are scheduled, not awaited."""
        for listener in list(self._listeners):
            outcome = listener(event)
            if asyncio.iscoroutine(outcome):
                asyncio.get_running_loop().create_task(outcome)

    # --- hooks ------------------------------------------------------------------------------------

    async def _before_tool_call(self, info: ToolCallInfo, signal: AbortSignal) -> BeforeToolCall | None:
        for _plugin_name, impl in self.plugins.ordered_impls("pi_before_tool_call"):
            try:
                decision = impl.function(call=info)  # type: ignore[attr-defined]
                if asyncio.iscoroutine(decision):
                    decision = await decision
            except ToolError as err:
                return BeforeToolCall(block=True, reason=str(err))
            if decision is None:
                continue
            if decision.block:
                return decision  # type: ignore[no-any-return]
            if decision.args is not None:
                info.args = decision.args
        return None

    def _after_tool_call(self, info: ToolCallInfo, result: ToolResult, is_error: bool,
                         signal: AbortSignal) -> AfterToolCall | None:
        merged: AfterToolCall | None = None
        for _plugin_name, impl in self.plugins.ordered_impls("pi_after_tool_call"):
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
        if self.models is not None and self.agent.state.model is not None:
            return self.models.api_key_for(self.agent.state.model)
        return None

    # --- state ------------------------------------------------------------------------------------

    @property
    def cwd(self) -> Path:
        return self.config.cwd

    def full_output_dir(self) -> Path | None:
        """Where the full output of long commands goes: beside the session file (it lasts as long as the
        session), or None without one (``--no-session``: the system temp dir)."""
        from pi_core.config_paths import session_outputs_dir

        file = self.store.session_file
        return session_outputs_dir(Path(file)) if self.store.is_persisted and file is not None else None

    @property
    def model(self) -> Model:
        return self.agent.state.model

    @property
    def system_prompt(self) -> str:
        return self.agent.state.system_prompt

    @property
    def session_name(self) -> str | None:
        return self.store.session_name

    @property
    def resources(self) -> Any:
        """Context files, skills and templates the prompt was built from (``pi_core.resources.Resources``)."""
        return self.prompt_source.resources if self.prompt_source is not None else None

    @property
    def active_tool_names(self) -> list[str]:
        return [tool.name for tool in self.agent.state.tools]

    @property
    def available_tools(self) -> dict[str, Tool]:
        return self.config.all_tools

    @property
    def project_trusted(self) -> bool:
        return self.config.project_trusted

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
        if self.prompt_source is not None:
            self.agent.state.system_prompt = self.prompt_source.build(self.agent.state.tools)

    def set_model(self, model: Model) -> None:
        self.agent.state.model = model
        self.store.append_model_change(model.provider, model.id)

    def set_thinking_level(self, level: str) -> None:
        if level not in THINKING_LEVELS:
            raise PiError(f'Invalid thinking level "{level}". Valid values: {", ".join(THINKING_LEVELS)}')
        self.agent.state.thinking_level = level
        self.store.append_thinking_level_change(level)

    def set_session_name(self, name: str) -> None:
        name = name.strip()
        if not name:
            raise PiError("Session name cannot be empty")
        self.store.append_session_info(name)
        self.emit_later(AgentEvent("session_info_changed", name=name))

    def append_entry(self, custom_type: str, data: Any = None) -> None:
        """A plugin's own session entry (not sent to the model)."""
        self.store.append_custom_entry(custom_type, data)

    def has_queued_messages(self) -> bool:
        return self.agent.has_queued_messages()

    def last_assistant(self) -> AssistantMessage | None:
        for message in reversed(self.messages):
            if isinstance(message, AssistantMessage):
                return message
        return None

    # --- prompting --------------------------------------------------------------------------------

    def _user_message(self, text: str, images: list[ImageContent] | None) -> UserMessage:
        return UserMessage(content=[TextContent(text=text), *(images or [])])

    async def prompt(self, text: str, images: list[ImageContent] | None = None, *,
                     streaming_behavior: str | None = None, source: str = "print", expand: bool = True) -> str:
        """The input pipeline (docs/config.md#input-pipeline): commands, input hook, expansion, run or queue.

        Returns what became of the text (Pi 1.6.0's ``disposition``): ``"handled"`` by a plugin command or
        input hook, ``"queued"`` as steering or follow-up, or ``"started"`` (a run, now settled)."""
        if expand and text.startswith("/"):
            name, _, rest = text[1:].partition(" ")
            command = self.commands.get(name)
            if command is not None:
                outcome = command.handler(rest.strip(), self.ext)
                if asyncio.iscoroutine(outcome):
                    await outcome
                return "handled"
        if expand:
            for _plugin, result in await self._call_hook("pi_input", ctx=self.ext, text=text, source=source):
                if result.action == "handled":
                    return "handled"
                if result.action == "transform" and result.text is not None:
                    text, images = result.text, result.images if result.images is not None else images
            text = self.expand_input(text)
        if self.is_streaming:
            if streaming_behavior == "steer":
                self.steer(text, images, expanded=True)
                return "queued"
            if streaming_behavior == "followUp":
                self.follow_up(text, images, expanded=True)
                return "queued"
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
        self.release_held_back()
        await self._check_compaction(skip_aborted=False)
        if self.compactor is not None:
            self.compactor.reset_overflow_guard()
        try:
            await self._run_agent(lambda: self.agent.prompt(messages))
        finally:
            self.agent.state.system_prompt = base_prompt
        # Pi 1.6.0: nothing more happens on its own (retries, compaction, queued messages are done)
        last = self.last_assistant()
        await self._emit(AgentEvent("agent_settled", aborted=last is not None and last.stop_reason == "aborted"))
        return "started"

    def send_custom_message(self, custom_type: str, content: Any, *, display: bool = True, details: Any = None,
                            deliver_as: str | None = None) -> None:
        """A plugin's message (docs/plugins.md#messages-from-plugins): queued, kept for the next prompt, or recorded."""
        message = _custom({"customType": custom_type, "content": content, "display": display, "details": details})
        if deliver_as == "nextTurn":
            self._next_turn.append(message)
        elif self.is_streaming:
            (self.agent.follow_up if deliver_as == "followUp" else self.agent.steer)(message)
            self.queue_changed()
        else:
            self.agent.state.messages.append(message)
            self.store.append_custom_message_entry(custom_type, content, display, details)

    def record_user_bash(self, message: dict[str, Any]) -> None:
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

            raise PiError("No model selected. Set a provider's API key (e.g. ANTHROPIC_API_KEY or OPENAI_API_KEY) "
                          "or use /login, or add models to "
                          f"{models_toml_path()}; then choose one with /model.")
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
        if event is None:
            return
        try:
            asyncio.get_running_loop().create_task(self._emit(event))
        except RuntimeError:
            pass  # no loop running: nobody can be listening

    async def abort(self) -> None:
        self.abort_retry()
        self.agent.abort()
        await self.agent.wait_for_idle()

    def request_abort(self) -> None:
        """Abort from synchronous code: the run stops; ``await abort()`` also waits for it."""
        self.abort_retry()
        self.agent.abort()

    def abort_retry(self) -> None:
        if self._retry_cancel is not None:
            self._retry_cancel.abort()

    async def wait_for_idle(self) -> None:
        await self.agent.wait_for_idle()

    # --- runs with auto-retry and auto-compaction (docs/sessions.md#auto-retry, docs/sessions.md#triggers)

    async def _run_agent(self, start: Callable[[], Awaitable[None]]) -> None:
        """Run, then retry retryable provider errors with backoff, then check for compaction."""
        await start()
        attempt = 0
        while True:
            last = self.last_assistant()
            retry = self.retry
            if last is None or retry is None or not retry.enabled or not retry.should_retry(last):
                if attempt and last is not None and last.stop_reason != "error":
                    await self._emit(AgentEvent("auto_retry_end", success=True, attempt=attempt))
                break
            attempt += 1
            if attempt > retry.max_retries:
                await self._emit(AgentEvent("auto_retry_end", success=False, attempt=retry.max_retries,
                                            final_error=last.error_message))
                break
            delay_ms = retry.delay_ms(attempt)
            await self._emit(AgentEvent("auto_retry_start", attempt=attempt, max_attempts=retry.max_retries,
                                        delay_ms=delay_ms, error_message=last.error_message))
            self._drop_trailing_error()
            self._retry_cancel = cancel = AbortSignal()
            try:
                await asyncio.wait_for(cancel.wait(), delay_ms / 1000)
            except TimeoutError:
                pass
            finally:
                self._retry_cancel = None
            if cancel.aborted:
                await self._emit(AgentEvent("auto_retry_end", success=False, attempt=attempt,
                                            final_error="Retry cancelled"))
                return
            await self.agent.continue_()
        await self._check_compaction(skip_aborted=True)

    def _drop_trailing_error(self) -> None:
        messages = self.agent.state.messages
        if messages and isinstance(messages[-1], AssistantMessage) and messages[-1].stop_reason == "error":
            self.agent.state.messages = messages[:-1]

    async def _check_compaction(self, *, skip_aborted: bool) -> None:
        last = self.last_assistant()
        if not self.auto_compaction or last is None or self.compactor is None:
            return
        self.is_compacting = True
        try:
            outcome = await self.compactor.check(last, self.model, self.messages, skip_aborted=skip_aborted,
                                                 thinking_level=self.agent.state.thinking_level)
        finally:
            self.is_compacting = False
        if outcome is None:
            return
        self.agent.state.messages = self.store.build_session_context().typed_messages()
        if skip_aborted and (outcome.will_retry or self.agent.has_queued_messages()):
            self._drop_trailing_error()
            await asyncio.sleep(0.1)
            await self._run_agent(self.agent.continue_)

    async def compact(self, custom_instructions: str | None = None) -> Any:
        """Manual compaction (``/compact``, RPC ``compact``): stops the run, summarises, reloads the context."""
        if self.compactor is None:
            raise PiError("Compaction is not available in this session")
        await self.abort()
        self.is_compacting = True
        try:
            outcome = await self.compactor.compact(self.model if self.model.id != "unknown" else None,
                                                   thinking_level=self.agent.state.thinking_level,
                                                   custom_instructions=custom_instructions)
        finally:
            self.is_compacting = False
        self.agent.state.messages = self.store.build_session_context().typed_messages()
        return outcome.result

    # --- the session file: new, switch, fork, clone (docs/sessions.md#session-operations) -------

    async def _stop_run(self) -> None:
        self.release_held_back()
        if self.is_streaming:
            await self.abort()

    async def new_session(self, parent_session: str | None = None) -> bool:
        """Start an empty session; True unless a plugin vetoed (no veto hook exists yet)."""
        await self._stop_run()
        await self.shutdown("new")
        self.store.new_session(parent_session=parent_session)
        self._reset_agent([])
        if _has_model(self.model):
            self.store.append_model_change(self.model.provider, self.model.id)
        self.store.append_thinking_level_change(self.agent.state.thinking_level)
        await self.start("new")
        return True

    async def switch_session(self, session_path: str) -> bool:
        await self._stop_run()
        path = Path(session_path).expanduser()
        if not path.is_absolute():
            path = Path(self.config.cwd) / path
        await self.shutdown("resume")
        self.store.set_session_file(path.resolve())
        self._restore_from_store()
        await self.start("resume")
        return True

    async def fork(self, entry_id: str) -> tuple[str, bool]:
        await self._stop_run()
        result = self.store.fork(entry_id)  # validates first: a bad id changes nothing
        await self.shutdown("fork")
        self._restore_from_store()
        await self.start("fork")
        return result.selected_text, False

    async def clone(self) -> bool:
        if self.store.leaf_id is None:
            raise PiError("Cannot clone session: no current entry selected")
        await self._stop_run()
        self.store.clone()
        await self.shutdown("fork")
        self._restore_from_store()
        await self.start("fork")
        return False

    def _reset_agent(self, messages: list[AgentMessage]) -> None:
        self.agent.reset()
        self.agent.state.messages = messages
        self._held_back.clear()

    def _restore_from_store(self) -> None:
        context = self.store.build_session_context()
        self._reset_agent(context.typed_messages())
        if context.model and self.models is not None:
            recorded = self.models.find(context.model.get("provider", ""), context.model.get("modelId", ""))
            if recorded is not None and self.models.has_auth(recorded.provider):
                self.agent.state.model = recorded
        if context.thinking_level:
            self.agent.state.thinking_level = clamp_level(self.model, context.thinking_level)


def _thinking_budgets(settings: SettingsStore | None) -> dict[str, int] | None:
    """The ``thinkingBudgets`` setting: token budgets per level for budget-based thinking APIs."""
    value = settings.get("thinkingBudgets") if settings is not None else None
    if not isinstance(value, dict):
        return None
    return {level: budget for level, budget in value.items()
            if isinstance(budget, int) and not isinstance(budget, bool) and budget > 0} or None


def clamp_level(model: Model | None, level: str) -> str:
    """``clamp_thinking_level``, except that no model means ``off`` and an unrecognised level becomes
    the model's first supported one (a client or an old session file may say anything)."""
    if not _has_model(model):
        return "off"
    assert model is not None
    if level not in THINKING_LEVELS:
        return supported_thinking_levels(model)[0]
    return clamp_thinking_level(model, level)


def _has_model(model: Model | None) -> bool:
    return model is not None and model.id != "unknown"


def _custom(data: dict[str, Any]) -> AgentMessage:
    fields = {k: v for k, v in data.items() if v is not None}
    return CustomMessage(role="custom", **fields)
