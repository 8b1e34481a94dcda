"""What an AgentSession is built from: its configuration and the typed collaborators handed in at construction.

The session declares only what it needs of each (Protocols); ``pi_core.app.startup.session_parts`` wires the
real ones from the wings (the JSONL store, the model registry, settings, the prompt builder, the compactor,
the retry policy, the process runner behind ``ctx.exec``, the session-file operations).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from pi_core.providers import ApiProvider, StreamOptions
from pi_core.session_log import SessionLog
from pi_core.tools import Tool, ToolPolicy, ToolSettings
from pi_core.types import (
    AgentMessage,
    AssistantMessage,
    AssistantMessageEvent,
    Context,
    Model,
    ScopedModel,
)

if TYPE_CHECKING:
    from pi_core.agent import Agent
    from pi_core.events import AgentEvent, Listeners
    from pi_core.extension import ExtensionContext
    from pi_core.hookspecs.results import (
        Cancel,
        CommandInfo,
        CompactionPreparation,
        CompactionResult,
        SystemPromptOptions,
        TreePreparation,
    )
    from pi_core.registry import PluginSet, Registry
    from pi_core.resources.context_files import ContextFile
    from pi_core.resources.diagnostics import Diagnostic
    from pi_core.resources.skills import Skill
    from pi_core.resources.templates import PromptTemplate
    from pi_core.session_host import ContextUsage, ExecResult, ModelAccess
    from pi_core.sessions.branching import ForkResult, TreeNode
    from pi_core.signals import AbortSignal
    from pi_core.types import Message

StreamFn = Callable[[Model, Context, StreamOptions], AsyncIterator[AssistantMessageEvent]]
RequestFn = Callable[[ApiProvider, Model, Context, StreamOptions], AsyncIterator[AssistantMessageEvent]]
ExecFn = Callable[..., Awaitable["ExecResult"]]  # (command, args, *, cwd, timeout, signal) -> ExecResult


class RebuiltContext(Protocol):
    """What a store rebuilds from the current branch (``pi_core.sessions.SessionContext``)."""

    model: dict[str, str] | None
    thinking_level: str

    def typed_messages(self) -> list[AgentMessage]: ...


class SessionStore(SessionLog, Protocol):
    """Where a session is recorded: ``pi_core.sessions.SessionManager`` (a JSONL file, or memory only)."""

    @property
    def is_persisted(self) -> bool: ...

    def get_tree(self) -> list[TreeNode]: ...
    def build_session_context(self) -> RebuiltContext: ...
    def new_session(self, id: str | None = None, parent_session: str | None = None) -> Path | None: ...
    def set_session_file(self, session_file: str | Path) -> None: ...
    def fork(self, entry_id: str) -> ForkResult: ...
    def clone(self) -> Path | None: ...


class ModelSource(Protocol):
    """The models pi knows and their credentials: ``pi_core.models.ModelRegistry``."""

    def available_models(self) -> list[Model]: ...
    def find(self, provider: str, model_id: str) -> Model | None: ...
    def has_auth(self, provider: str) -> bool: ...
    def api_key_for(self, model: Model) -> str:
        """The key for ``model``; raises ``MissingApiKey`` naming what to set when there is none."""


class SettingsStore(Protocol):
    """Global + project settings: ``pi_core.app.settings.Settings``."""

    def get(self, key: str, default: Any = None) -> Any: ...  # open: a settings value, JSON (settings.json)
    def set(self, key: str, value: Any) -> None: ...  # open: a settings value, JSON (settings.json)
    def reload(self) -> None: ...
    def as_dict(self) -> dict[str, Any]:  # open: the merged settings, JSON
        """A copy of the merged settings."""
    @property
    def thinking_budgets(self) -> dict[str, int] | None: ...


class LoadedResources(Protocol):
    """What a prompt source read: context files, skills, prompt templates and what was wrong with them
    (``pi_core.resources.Resources`` is the one pi has; its item types belong to that wing)."""

    @property
    def context_files(self) -> Sequence[ContextFile]: ...
    @property
    def skills(self) -> Sequence[Skill]: ...
    @property
    def templates(self) -> Sequence[PromptTemplate]: ...
    @property
    def diagnostics(self) -> Sequence[Diagnostic]: ...
    def skill(self, name: str) -> Skill | None: ...
    def template(self, name: str) -> PromptTemplate | None: ...
    def command_infos(self) -> list[CommandInfo]: ...


class PromptSource(Protocol):
    """Builds the system prompt for the active tools; ``reload`` re-reads its files (``/reload``).

    ``resources`` is what it read; ``options(tools)`` are the inputs ``build`` uses, which
    ``build(tools, options)`` accepts edited back.
    """

    @property
    def resources(self) -> LoadedResources: ...

    def build(self, tools: list[Tool], options: SystemPromptOptions | None = None) -> str: ...
    def sections_of(self, prompt: str) -> dict[str, str] | None:
        """The named sections of a prompt ``build`` made lately; None for another text."""
    def options(self, tools: list[Tool]) -> SystemPromptOptions: ...
    def reload(self) -> None: ...
    def add_resource_paths(self, owner: str, skills: list[str | Path], prompts: list[str | Path],
                           themes: list[str | Path]) -> None: ...


class CompactionHook(Protocol):
    async def __call__(self, preparation: CompactionPreparation,
                       branch_entries: list[dict[str, Any]],  # open: session entries as Pi's JSONL records
                       custom_instructions: str | None, reason: str,
                       signal: AbortSignal) -> CompactionResult | Cancel | None: ...


class CompactionDone(Protocol):
    """A compaction ``Compaction.compact`` stored (``pi_core.compaction.CompactionOutcome``)."""

    @property
    def result(self) -> CompactionResult: ...


class TreeMove(Protocol):
    """Where ``Compaction.navigate`` moved the leaf (``pi_core.compaction.NavigationResult``)."""

    old_leaf_id: str | None
    new_leaf_id: str | None
    editor_text: str | None  # for the editor: the user message navigated to
    summary_entry: dict[str, Any] | None  # open: the branch summary entry written, Pi's JSONL record
    cancelled: bool


class CompactingSession(Protocol):
    """What auto-compaction reads and resets of the session it runs for (``AgentSession``)."""

    agent: Agent

    def last_assistant(self) -> AssistantMessage | None: ...
    @property
    def model(self) -> Model: ...
    @property
    def thinking_level(self) -> str: ...
    @property
    def messages(self) -> list[AgentMessage]: ...
    def reload_messages(self) -> None: ...  # from the store, after compacting
    def has_queued_messages(self) -> bool: ...


class CacheWarming(Protocol):
    """The session's prompt-cache warmer (``pi_core.llm.cache_warmer.CacheWarmer``)."""

    def cancel(self) -> None: ...


class Compaction(Protocol):
    """Summarises old history and branches left behind: ``pi_core.compaction.Compactor``."""

    running: bool  # a compaction, or the check for one, is under way (``AgentSession.is_compacting``)

    def subscribe(self, listener: Callable[[AgentEvent], object]) -> None: ...
    def use_hook(self, hook: CompactionHook) -> None: ...
    def reset_overflow_guard(self) -> None: ...
    async def compact(self, model: Model | None, *, thinking_level: str | None = None,
                      custom_instructions: str | None = None) -> CompactionDone: ...
    async def after_turn(self, session: CompactingSession, *, skip_aborted: bool) -> bool:
        """Auto-compaction of ``session`` when due; True when its run should continue now."""
    def context_usage(self, messages: list[AgentMessage], model: Model) -> ContextUsage | None: ...
    def prepare_tree(self, target_id: str | None, *, summarize: bool, custom_instructions: str | None,
                     replace_instructions: bool, label: str | None) -> TreePreparation: ...
    async def navigate(self, preparation: TreePreparation, model: Model | None, *, summary: str | None = None,
                       details: Any = None,  # open: plugin-defined details, stored in the session JSON
                       signal: AbortSignal | None = None) -> TreeMove: ...


class AutoRetry(Protocol):
    """Agent-level retry of retryable provider errors (``pi_core.llm.retry.AgentRetry``)."""

    enabled: bool
    max_retries: int

    def should_retry(self, message: AssistantMessage) -> bool: ...
    def delay_ms(self, attempt: int) -> int: ...


class RunningSession(Protocol):
    """What the session-file operations use of the session they act on (``pi_core.session.AgentSession``):
    its parts, and the run it stops and the lifecycle it ends and starts again around a switch."""

    agent: Agent
    store: SessionStore
    plugins: PluginSet
    ext: ExtensionContext
    listeners: Listeners
    models: ModelSource | None
    compactor: Compaction | None

    @property
    def is_idle(self) -> bool: ...
    async def stop_run(self) -> None: ...  # before the file changes
    async def shutdown(self, reason: str = "quit", target_session_file: str | None = None) -> None: ...
    async def start(self, reason: str = "startup", previous_session_file: str | None = None) -> None: ...
    @property
    def model(self) -> Model: ...
    @property
    def thinking_level(self) -> str: ...
    def reset_agent(self, messages: list[AgentMessage]) -> None: ...
    @property
    def cwd(self) -> Path: ...
    async def abort(self) -> None: ...
    def reload_messages(self) -> None: ...


class SessionFileOps(Protocol):
    """New, resume, fork, clone, tree navigation and manual compaction over the session passed first
    (``pi_core.control.session_files.SessionFiles``); ``AgentSession`` delegates its methods of these names."""

    async def new_session(self, session: RunningSession, parent_session: str | None = None, *,
                          setup: Callable[[SessionStore], object] | None = None) -> bool: ...
    async def switch_session(self, session: RunningSession, session_path: str) -> bool: ...
    async def fork(self, session: RunningSession, entry_id: str) -> tuple[str, bool]: ...
    async def clone(self, session: RunningSession) -> bool: ...
    async def navigate_tree(self, session: RunningSession, target_id: str | None, *, summarize: bool = False,
                            custom_instructions: str | None = None, replace_instructions: bool = False,
                            label: str | None = None) -> TreeMove | None: ...
    async def compact(self, session: RunningSession, custom_instructions: str | None = None) -> CompactionResult: ...
    def compact_later(self, session: RunningSession, custom_instructions: str | None,
                      on_complete: Callable[[CompactionResult], object] | None,
                      on_error: Callable[[BaseException], object] | None) -> asyncio.Task[object]: ...


@dataclass(eq=False, repr=False)
class SessionConfig:
    """What a session is made with: folder, model, thinking level, tools and prompt."""

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
    flag_values: dict[str, Any] = field(default_factory=dict)  # open: plugin flag values, as each flag declares them; plugin flags (pi_flags): given or default


@dataclass(eq=False, repr=False)
class SessionParts:
    """The collaborators a session is built from. Only the store is required; the rest default to
    "not available" (no key lookup, no settings file, no compaction, no agent-level retry, no ``ctx.exec``,
    no session-file operations)."""

    store: SessionStore
    stream_fn: StreamFn | None = None  # default: the provider plugin serving ``model.api``, no retry
    models: ModelSource | None = None
    settings: SettingsStore | None = None
    prompt: PromptSource | None = None
    compactor: Compaction | None = None
    retry: AutoRetry | None = None
    messages: list[AgentMessage] = field(default_factory=list)  # the history to continue
    expand_input: Callable[[str], str] | None = None  # prompt templates and skills
    convert_to_llm: Callable[[list[AgentMessage]], list[Message]] | None = None
    exec: ExecFn | None = None  # ``ctx.exec``: pi_core.toolkit.exec.run_program
    model_access: ModelAccess | None = None  # ``ctx.model_registry``: pi_core.models.access.SessionModels
    files: SessionFileOps | None = None  # new/resume/fork/clone/tree/compact: pi_core.control.session_files
    reimport: Callable[[PluginSet], object] | None = None  # /reload: pi_core.app.plugin_reload.reload_plugins
    cache_warmer: CacheWarming | None = None  # pi_core.llm.cache_warmer.CacheWarmer: bound by its builder, cancelled at the end


def provider_stream_fn(registry: Registry, request: RequestFn | None = None) -> StreamFn:
    """A loop ``stream_fn`` that sends each request to the plugin serving ``model.api``, through
    ``request`` when given (``pi_core.llm.retry.stream_with_retry`` adds request-level retries)."""

    def stream(model: Model, context: Context, options: StreamOptions) -> AsyncIterator[AssistantMessageEvent]:
        provider = registry.providers.items.get(model.api)
        if provider is None:
            return _no_provider(model)
        # Handed over, not re-yielded: every event of a turn would pass one more generator.
        return request(provider, model, context, options) if request is not None else \
            provider.stream(model, context, options)

    return stream


async def _no_provider(model: Model) -> AsyncIterator[AssistantMessageEvent]:
    failed = AssistantMessage(api=model.api, provider=model.provider, model=model.id, stop_reason="error",
                              error_message=f"No API provider registered for api: {model.api}")
    yield AssistantMessageEvent(type="error", reason="error", error=failed)
