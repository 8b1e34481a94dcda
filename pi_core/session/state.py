"""SessionState: what an AgentSession holds and the changes front ends and plugins make to it.

The model, thinking level, tools, name and labels and the system prompt they are built into.
``pi_core.session.AgentSession`` adds the runs: the input pipeline, queues, retries and compaction, and the
operations on the session file (handed to ``SessionFileOps``, which stop the run and restart the lifecycle). The split is by job; the two are one object.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from pi_core.errors import PiError
from pi_core.events import AgentEvent, Listeners
from pi_core.extension import ExtensionContext
from pi_core.hookspecs.results import SystemPromptOptions
from pi_core.registry import Contributions, PluginSet, Registry, keyed
from pi_core.session.parts import (
    Compaction,
    ExecFn,
    LoadedResources,
    ModelSource,
    PromptSource,
    SessionConfig,
    SessionFileOps,
    SessionStore,
    SettingsStore,
)
from pi_core.session_host import ContextUsage, ExecResult
from pi_core.signals import AbortSignal
from pi_core.tools import Tool, choose_tools, merge_tools
from pi_core.types import (
    THINKING_LEVELS,
    AgentMessage,
    AssistantMessage,
    Model,
    ScopedModel,
    clamp_level,
)

if TYPE_CHECKING:
    from pi_core.agent import Agent
    from pi_core.session.retry import RetryingRuns

Entry = TypeVar("Entry")  # a registry kind: tools, providers, renderers


class SessionState:
    config: SessionConfig
    plugins: PluginSet
    registry: Registry
    agent: Agent
    retries: RetryingRuns
    store: SessionStore
    models: ModelSource | None
    settings: SettingsStore | None
    prompt_source: PromptSource | None
    compactor: Compaction | None
    files: SessionFileOps | None
    listeners: Listeners
    ext: ExtensionContext
    _exec: ExecFn | None
    _busy: int
    _sending: set[asyncio.Future[None]]

    async def _call(self, hook: str, /, **kwargs: Any) -> Any:
        return await self.plugins.call(hook, ctx=self.ext, **kwargs)

    def _rebuild_prompt(self, options: SystemPromptOptions | None = None) -> None:
        if self.prompt_source is not None:
            tools = self.agent.state.tools
            self.agent.state.system_prompt = self.prompt_source.build(tools) if options is None else \
                self.prompt_source.build(tools, options)

    def _prompt_for(self, options: SystemPromptOptions) -> str | None:
        tools = self.config.all_tools
        return self.prompt_source.build([tools[n] for n in options.selected_tools if n in tools], options) \
            if self.prompt_source is not None else None

    def system_prompt_options(self) -> SystemPromptOptions:
        if self.prompt_source is None:
            return SystemPromptOptions(selected_tools=self.active_tool_names, cwd=str(self.cwd))
        return self.prompt_source.options(self.agent.state.tools)

    def emit_later(self, event: AgentEvent) -> None:
        """Emit from synchronous code: listeners run now; async ones (and plugins) are scheduled, not awaited."""
        self.listeners.emit_later(event)

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
    def thinking_level(self) -> str:
        return self.agent.state.thinking_level

    @property
    def scoped_models(self) -> list[ScopedModel]:
        return self.config.scoped_models

    @property
    def signal(self) -> AbortSignal | None:
        return self.agent.signal

    @property
    def flag_values(self) -> dict[str, Any]:  # open: plugin flag values, as each flag declares them
        return self.config.flag_values

    @property
    def system_prompt(self) -> str:
        return self.agent.state.system_prompt

    @property
    def session_name(self) -> str | None:
        return self.store.session_name

    @property
    def resources(self) -> LoadedResources | None:
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
    def is_compacting(self) -> bool:
        return self.compactor is not None and self.compactor.running

    @property
    def is_idle(self) -> bool:
        """Nothing running: no run, retry wait, compaction, queued continuation or plugin message being sent."""
        return not (self.is_streaming or self.is_compacting or self._busy or self.retries.waiting or self._sending)

    @property
    def active_tools(self) -> list[Tool]:
        return list(self.agent.state.tools)

    def set_active_tools(self, names: list[str]) -> None:
        self.agent.state.tools = choose_tools(self.config.all_tools, names, self.config.tool_policy)
        self._rebuild_prompt()

    def add_tools(self, tools: list[Tool]) -> list[str]:
        """Make tools available while the session runs, e.g. as a server connects (``merge_tools``); a tool of
        the same name is replaced. Returns the names added."""
        self.agent.state.tools, added = merge_tools(self.agent.state.tools, self.config.all_tools, tools,
                                                    self.config.tool_policy)
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

    async def refresh_tools(self) -> list[str]:
        """Collect ``pi_tools`` again: new tools join (active unless ``active_by_default=False``), changed ones
        are replaced, and a plugin's tool no plugin contributes now (its instance ended, its file changed) is
        withdrawn; the system prompt is rebuilt. Returns the names added."""
        found = keyed(self.plugins, await self.plugins.call("pi_tools"), "tool", "name",
                      chosen=self.registry.tool_overrides)
        self.remove_tools(self.renew(self.registry.tools, found))
        new = [name for name in found.items if name not in self.config.all_tools]
        changed = [tool for tool in found.items.values() if self.config.all_tools.get(tool.name) is not tool]
        for tool in changed:  # registered but off: the user's selection and active_by_default decide
            if tool.name in new and not tool.active_by_default:
                self.config.all_tools[tool.name] = tool
        added = self.add_tools([t for t in changed if t.name not in new or t.active_by_default])
        self._rebuild_prompt()
        return [name for name in new if name in added or name in self.config.all_tools]

    def renew(self, listed: Contributions[Entry], found: Contributions[Entry]) -> list[str]:
        """``listed`` (a kind of the registry) becomes what the plugins contribute now, ``found``; an entry no
        loaded plugin gave (the SDK's custom tools, an embedder's provider) stays as it is, also where it won
        over a plugin's of its name. Returns the names withdrawn."""
        kept = {name: owner for name in listed.items if not self._a_plugin(owner := listed.owner.get(name, ""))}
        gone = [name for name in listed.items if name not in found.items and name not in kept]
        for name, owner in kept.items():
            if name in found.owner:
                found.by_plugin[found.owner.pop(name)].remove(name)
            found.items[name] = listed.items[name]
            if owner:
                found.owner[name] = owner
                found.by_plugin.setdefault(owner, []).append(name)
        listed.items, listed.owner, listed.by_plugin = found.items, found.owner, found.by_plugin
        return gone

    def _a_plugin(self, name: str) -> bool:
        return bool(name) and (name in self.plugins.info or self.plugins.pm.get_plugin(name) is not None)

    def set_model(self, model: Model, *, source: str = "set") -> None:
        """Switch model and record it; ``pi_model_select`` follows (scheduled: this may run outside a loop)."""
        previous = self.agent.state.model
        self.agent.state.model = model
        self.store.append_model_change(model.provider, model.id)
        if self.plugins.has("pi_model_select"):
            self.listeners.later(self._call("pi_model_select", model=model, source=source,
                                   previous_model=previous if _has_model(previous) else None))

    async def select_model(self, model: Model, *, source: str = "set") -> bool:
        """``ctx.set_model``: False when the model has no credentials; the thinking level is clamped to it."""
        if self.models is not None and not self.models.has_auth(model.provider) and not self.config.api_key:
            return False
        self.set_model(model, source=source)
        self.set_thinking_level(self.agent.state.thinking_level)
        return True

    def set_thinking_level(self, level: str) -> None:
        if level not in THINKING_LEVELS:
            raise PiError(f'Invalid thinking level "{level}". Valid values: {", ".join(THINKING_LEVELS)}')
        previous = self.agent.state.thinking_level
        level = clamp_level(self.model, level) if _has_model(self.model) else level
        self.agent.state.thinking_level = level
        if level == previous:
            return
        self.store.append_thinking_level_change(level)
        if self.plugins.has("pi_thinking_level_select"):
            self.listeners.later(self._call("pi_thinking_level_select", level=level, previous_level=previous))

    def set_session_name(self, name: str) -> None:
        name = name.strip()
        if not name:
            raise PiError("Session name cannot be empty")
        self.store.append_session_info(name)
        self.emit_later(AgentEvent("session_info_changed", name=name))

    def set_label(self, entry_id: str, label: str | None) -> None:
        if self.store.get_entry(entry_id) is None:
            raise PiError(f"Entry {entry_id} not found")
        self.store.append_label_change(entry_id, label)

    def append_entry(self, custom_type: str, data: Any = None) -> str:  # open: plugin-defined data, stored in the session JSON
        """A plugin's own session entry (not sent to the model); returns its id."""
        return self.store.append_custom_entry(custom_type, data)

    def has_queued_messages(self) -> bool:
        return self.agent.has_queued_messages()

    def last_assistant(self) -> AssistantMessage | None:
        return self.agent.last_assistant()

    def context_usage(self) -> ContextUsage | None:
        if self.compactor is None or not _has_model(self.model):
            return None
        return self.compactor.context_usage(self.messages, self.model)

    def settings_copy(self) -> dict[str, Any]:  # open: the merged settings, JSON
        return self.settings.as_dict() if self.settings is not None else {}

    async def exec(self, command: str, args: list[str], *, cwd: Path | None = None, timeout: float | None = None,
                   signal: AbortSignal | None = None) -> ExecResult:
        if self._exec is None:
            raise PiError("ctx.exec is not available in this session (no process runner was configured)")
        return await self._exec(command, args, cwd=cwd or self.cwd, timeout=timeout, signal=signal)



def _has_model(model: Model | None) -> bool:
    return model is not None and model.id != "unknown"

