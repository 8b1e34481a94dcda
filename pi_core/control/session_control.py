"""SessionControl: the commands front ends give a session (RPC commands, interactive slash commands).

It wraps one AgentSession: state for clients, model and thinking changes (saved as defaults), queue modes,
toggles, the user's own shell commands, export. Each front end builds its own around the session it runs;
the session itself knows nothing of it. Events it produces (thinking level) reach the session's listeners
before the command returns.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pi_core.control.user_bash import BashRunner
from pi_core.errors import PiError
from pi_core.events import AgentEvent
from pi_core.types import (
    AssistantMessage,
    Model,
    UserMessage,
    clamp_level,
    supported_thinking_levels,
)

if TYPE_CHECKING:
    from pi_core.agent import Agent
    from pi_core.session import AgentSession
    from pi_core.session.parts import ModelSource, SessionStore

QUEUE_MODES = ("all", "one-at-a-time")


def _has_model(model: Model | None) -> bool:
    return model is not None and model.id != "unknown"


class SessionControl:
    """State, model, queue-mode, toggle, bash and session-file commands over one AgentSession."""

    def __init__(self, session: AgentSession, *, emit: Callable[[AgentEvent], None] | None = None,
                 models: ModelSource | None = None) -> None:
        self.session = session
        self.emit = emit or session.emit_later  # sync: the event is written before the command's answer
        self.bash = BashRunner(session)
        self._models = models

    @property
    def store(self) -> SessionStore:
        return self.session.store

    @property
    def agent(self) -> Agent:
        return self.session.agent

    # --- state ------------------------------------------------------------------------------------

    def state(self) -> dict[str, Any]:  # open: RPC answer data, JSON (docs/rpc.md)
        session, agent, store = self.session, self.agent, self.store
        data: dict[str, Any] = {}
        if _has_model(session.model):
            data["model"] = session.model.to_json()
        data["thinkingLevel"] = agent.state.thinking_level
        data["isStreaming"] = session.is_streaming
        data["isCompacting"] = session.is_compacting
        data["steeringMode"] = agent.steering_mode
        data["followUpMode"] = agent.follow_up_mode
        if store.is_persisted and store.session_file is not None:
            data["sessionFile"] = str(store.session_file)
        data["sessionId"] = store.session_id
        if store.session_name:
            data["sessionName"] = store.session_name
        data["autoCompactionEnabled"] = session.auto_compaction
        data["messageCount"] = len(session.messages)
        data["pendingMessageCount"] = len(agent.steering_queue) + len(agent.follow_up_queue)
        return data

    def last_assistant_text(self) -> str | None:
        for message in reversed(self.session.messages):
            if not isinstance(message, AssistantMessage):
                continue
            if message.stop_reason == "aborted" and not message.content:
                continue
            text = "".join(b.text for b in message.content if b.type == "text").strip()
            return text or None
        return None

    def fork_messages(self) -> list[dict[str, str]]:
        from pi_core.sessions.messages import message_text

        found = []
        for entry in self.store.get_entries():
            message = entry.get("message")
            if entry.get("type") == "message" and isinstance(message, dict) and message.get("role") == "user":
                text = message_text(message, "")
                if text:
                    found.append({"entryId": entry["id"], "text": text})
        return found

    # --- models and thinking ----------------------------------------------------------------------

    def model_registry(self) -> ModelSource:
        """The session's models, or a registry built from its plugins when it was given none."""
        if self._models is None:
            from pi_core.models.registry import ModelRegistry

            self._models = self.session.models or ModelRegistry.from_plugins(self.session.plugins)
        return self._models

    def available_models(self, discover: bool = False) -> list[Model]:
        """Models with credentials; ``discover`` first asks local servers what they serve (``/model``)."""
        registry = self.model_registry()
        probe = getattr(registry, "discover", None)  # a stand-in registry (tests, embedders) may not probe
        if discover and probe is not None:
            probe(self.session.settings)
        return list(registry.available_models())

    def set_model(self, provider: str, model_id: str) -> Model:
        model = next((m for m in self.available_models() if m.provider == provider and m.id == model_id), None)
        if model is None:
            raise PiError(f"Model not found: {provider}/{model_id}")
        self._switch_model(model, None, "set")
        return model

    def cycle_model(self, backward: bool = False) -> dict[str, Any] | None:  # open: RPC answer data, JSON (docs/rpc.md)
        scoped = self._scope()
        if len(scoped) < 2:
            return None
        current = self.session.model
        index = next((i for i, (m, _) in enumerate(scoped)
                      if m.provider == current.provider and m.id == current.id), 0)
        model, level = scoped[(index + (-1 if backward else 1)) % len(scoped)]
        self._switch_model(model, level, "cycle")
        return {"model": model.to_json(), "thinkingLevel": self.agent.state.thinking_level,
                "isScoped": bool(self.session.config.scoped_models)}

    def _scope(self) -> list[tuple[Model, str | None]]:
        registry = self.model_registry()
        scoped = self.session.config.scoped_models
        entries = [(s.model, s.thinking) for s in scoped if registry.has_auth(s.model.provider)]
        return entries or [(m, None) for m in self.available_models()]

    def _switch_model(self, model: Model, level: str | None, source: str) -> None:
        self.session.set_model(model, source=source)
        _save_setting(self.session, "defaultProvider", model.provider)
        _save_setting(self.session, "defaultModel", model.id)
        settings = self.session.settings
        levels = settings.get("modelThinkingLevels") if settings is not None else None  # checked: a table of levels
        preferred = levels.get(f"{model.provider}/{model.id}") if isinstance(levels, dict) else None
        self._apply_thinking_level(level or preferred or self.agent.state.thinking_level)

    def set_thinking_level(self, level: str) -> None:
        self._apply_thinking_level(level)

    def available_thinking_levels(self) -> list[str]:
        """The levels the current model supports (``["off"]`` without reasoning or without a model)."""
        model = self.session.model
        return supported_thinking_levels(model) if _has_model(model) else ["off"]

    def cycle_thinking_level(self) -> str | None:
        level = next_thinking_level(self.session.model, self.agent.state.thinking_level)
        if level is None:
            return None
        self._apply_thinking_level(level)
        return self.agent.state.thinking_level

    def _apply_thinking_level(self, level: str) -> None:
        effective = clamp_level(self.session.model if _has_model(self.session.model) else None, level)
        if effective == self.agent.state.thinking_level:
            return
        self.session.set_thinking_level(effective)
        self.emit(AgentEvent("thinking_level_changed", level=effective))

    # --- queue modes and toggles ------------------------------------------------------------------

    def clear_queue(self) -> tuple[list[str], list[str]]:
        """Empty both queues (Pi 1.6.0 ``clear_queue``); returns the steering and follow-up texts removed."""
        agent = self.agent
        steering = [m.text() for m in agent.steering_queue if isinstance(m, UserMessage)]
        follow_up = [m.text() for m in agent.follow_up_queue if isinstance(m, UserMessage)]
        agent.clear_all_queues()
        self.session.queue_changed()
        return steering, follow_up

    def set_steering_mode(self, mode: str) -> None:
        self.agent.steering_mode = _queue_mode(mode)
        _save_setting(self.session, "steeringMode", mode)

    def set_follow_up_mode(self, mode: str) -> None:
        self.agent.follow_up_mode = _queue_mode(mode)
        _save_setting(self.session, "followUpMode", mode)

    def set_auto_compaction(self, enabled: bool) -> None:
        self.session.auto_compaction = enabled
        _save_setting(self.session, "compaction.enabled", enabled)

    def set_auto_retry(self, enabled: bool) -> None:
        if self.session.retry is not None:
            self.session.retry.enabled = enabled
        _save_setting(self.session, "retry.enabled", enabled)

    def abort_retry(self) -> None:
        self.session.abort_retry()

    # --- session files ----------------------------------------------------------------------------

    async def new_session(self, parent_session: str | None) -> bool:
        return await self.session.new_session(parent_session)

    async def switch_session(self, session_path: str) -> bool:
        return await self.session.switch_session(session_path)

    async def fork(self, entry_id: str) -> tuple[str, bool]:
        return await self.session.fork(entry_id)

    async def clone(self) -> bool:
        """True when a plugin vetoed (RPC's ``cancelled``)."""
        return not await self.session.clone()

    def set_session_name(self, name: str) -> None:
        self.session.set_session_name(name)

    def export_html(self, output_path: str | None, colors: dict[str, str] | None = None) -> str:
        """Write the session's viewer page (with this run's system prompt and tools); ``colors`` are the
        theme's CSS variables (the default dark page when None)."""
        if not self.store.is_persisted:
            raise PiError("Cannot export in-memory session to HTML")
        from pi_core.export.html import ExportTool, default_export_path, export_html

        session_file = self.store.session_file
        if session_file is None or not Path(session_file).is_file():
            raise PiError("Nothing to export yet - start a conversation first")
        cwd = Path(self.session.config.cwd)
        target = Path(output_path).expanduser() if output_path else default_export_path(session_file, cwd)
        if not target.is_absolute():
            target = cwd / target
        tools = [ExportTool(t.name, t.description, t.json_schema) for t in self.session.active_tools]
        prompt = self.session.agent.state.system_prompt or None
        return str(export_html(session_file, target, colors=colors, system_prompt=prompt, tools=tools))


def _queue_mode(mode: str) -> Any:
    if mode not in QUEUE_MODES:
        raise PiError(f'Invalid mode "{mode}". Valid values: {", ".join(QUEUE_MODES)}')
    return mode


def _save_setting(session: AgentSession, key: str, value: Any) -> None:
    if session.settings is not None:
        session.settings.set(key, value)


def next_thinking_level(model: Model | None, current: str) -> str | None:
    """The level after ``current`` in the supported cycle, wrapping; None without reasoning support."""
    if model is None or not model.reasoning:
        return None
    levels = supported_thinking_levels(model)
    index = levels.index(current) if current in levels else -1
    return levels[(index + 1) % len(levels)]


SessionOps = SessionControl  # the 0.1 name, kept for one release
