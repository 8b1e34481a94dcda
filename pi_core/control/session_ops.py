"""Session commands shared by every front end (RPC commands, interactive slash commands, plugins).

State, model and thinking changes, queue modes, user bash, and the session-file operations (new,
switch, fork, clone, export). ``AgentSession.ops`` holds one; events it produces (thinking level,
session name) go to the session's listeners before the command returns.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pi_core.errors import PiError
from pi_core.events import AgentEvent
from pi_core.models.thinking import clamp_thinking_level, supported_thinking_levels
from pi_core.types import THINKING_LEVELS, AssistantMessage, Model
from pi_core.control.user_bash import BashRunner

if TYPE_CHECKING:
    from pi_core.session import AgentSession

QUEUE_MODES = ("all", "one-at-a-time")


def _has_model(model: Model | None) -> bool:
    return model is not None and model.id != "unknown"


class SessionOps:
    """State, model, queue-mode, bash and session-file commands over one AgentSession."""

    def __init__(self, session: AgentSession, *, emit: Callable[[AgentEvent], None] | None = None) -> None:
        self.session = session
        self.emit = emit or session.emit_later  # sync: the event is written before the command's answer
        self.bash = BashRunner(session)

    @property
    def store(self) -> Any:
        return self.session.store

    @property
    def agent(self) -> Any:
        return self.session.agent

    # --- state ------------------------------------------------------------------------------------

    def state(self) -> dict[str, Any]:
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
            text = "".join(b.text for b in message.content if b.type == "text").strip()  # type: ignore[union-attr]
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

    def model_registry(self) -> Any:
        if self.session.models is None:
            from pi_core.models.registry import ModelRegistry

            self.session.models = ModelRegistry.from_plugins(self.session.plugins)
        return self.session.models

    def available_models(self, discover: bool = False) -> list[Model]:
        """Models with credentials; ``discover`` first asks local servers what they serve (``/model``)."""
        registry = self.model_registry()
        if discover:
            registry.discover(self.session.settings)
        return list(registry.available_models())

    def set_model(self, provider: str, model_id: str) -> Model:
        model = next((m for m in self.available_models() if m.provider == provider and m.id == model_id), None)
        if model is None:
            raise PiError(f"Model not found: {provider}/{model_id}")
        self._switch_model(model, None)
        return model

    def cycle_model(self) -> dict[str, Any] | None:
        scoped = self._scope()
        if len(scoped) < 2:
            return None
        current = self.session.model
        index = next((i for i, (m, _) in enumerate(scoped)
                      if m.provider == current.provider and m.id == current.id), 0)
        model, level = scoped[(index + 1) % len(scoped)]
        self._switch_model(model, level)
        return {"model": model.to_json(), "thinkingLevel": self.agent.state.thinking_level,
                "isScoped": bool(self.session.scoped_models)}

    def _scope(self) -> list[tuple[Model, str | None]]:
        registry = self.model_registry()
        scoped = self.session.scoped_models
        entries = [(s.model, s.thinking) for s in scoped if registry.has_auth(s.model.provider)]
        return entries or [(m, None) for m in self.available_models()]

    def _switch_model(self, model: Model, level: str | None) -> None:
        self.session.set_model(model)
        _save_setting(self.session, "defaultProvider", model.provider)
        _save_setting(self.session, "defaultModel", model.id)
        self._apply_thinking_level(level or self.agent.state.thinking_level)

    def set_thinking_level(self, level: str) -> None:
        self._apply_thinking_level(level)

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
        if self.session.retry_settings is not None:
            self.session.retry_settings.enabled = enabled
        _save_setting(self.session, "retry.enabled", enabled)

    def abort_retry(self) -> None:
        self.session.abort_retry()

    # --- session files ----------------------------------------------------------------------------

    async def new_session(self, parent_session: str | None) -> bool:
        """Start an empty session; True unless a plugin vetoed (no veto hook exists yet)."""
        await self._stop_run()
        await self.session.shutdown("new")
        self.store.new_session(parent_session=parent_session)
        self._reset_agent([])
        model = self.session.model
        if _has_model(model):
            self.store.append_model_change(model.provider, model.id)
        self.store.append_thinking_level_change(self.agent.state.thinking_level)
        await self.session.start("new")
        return True

    async def switch_session(self, session_path: str) -> bool:
        await self._stop_run()
        path = Path(session_path).expanduser()
        if not path.is_absolute():
            path = Path(self.session.config.cwd) / path
        await self.session.shutdown("resume")
        self.store.set_session_file(path.resolve())
        self._restore_from_store()
        await self.session.start("resume")
        return True

    async def fork(self, entry_id: str) -> tuple[str, bool]:
        await self._stop_run()
        result = self.store.fork(entry_id)  # validates first: a bad id changes nothing
        await self.session.shutdown("fork")
        self._restore_from_store()
        await self.session.start("fork")
        return result.selected_text, False

    async def clone(self) -> bool:
        if self.store.leaf_id is None:
            raise PiError("Cannot clone session: no current entry selected")
        await self._stop_run()
        self.store.clone()
        await self.session.shutdown("fork")
        self._restore_from_store()
        await self.session.start("fork")
        return False

    def set_session_name(self, name: str) -> None:
        name = name.strip()
        if not name:
            raise PiError("Session name cannot be empty")
        self.store.append_session_info(name)
        self.emit(AgentEvent("session_info_changed", name=name))

    def export_html(self, output_path: str | None) -> str:
        if not self.store.is_persisted:
            raise PiError("Cannot export in-memory session to HTML")
        from pi_core.export.html import default_export_path, export_html

        session_file = self.store.session_file
        if session_file is None or not Path(session_file).is_file():
            raise PiError("Nothing to export yet - start a conversation first")
        cwd = Path(self.session.config.cwd)
        target = Path(output_path).expanduser() if output_path else default_export_path(session_file, cwd)
        if not target.is_absolute():
            target = cwd / target
        return str(export_html(session_file, target))

    async def _stop_run(self) -> None:
        self.bash.flush_pending()
        if self.session.is_streaming:
            await self.session.abort()

    def _reset_agent(self, messages: list[Any]) -> None:
        self.agent.reset()
        self.agent.state.messages = messages
        self.bash.clear_pending()

    def _restore_from_store(self) -> None:
        context = self.store.build_session_context()
        self._reset_agent(context.typed_messages())
        if context.model:
            registry = self.model_registry()
            recorded = registry.find(context.model.get("provider", ""), context.model.get("modelId", ""))
            if recorded is not None and registry.has_auth(recorded.provider):
                self.agent.state.model = recorded
        if context.thinking_level:
            self.agent.state.thinking_level = clamp_level(self.session.model, context.thinking_level)


def _queue_mode(mode: str) -> Any:
    if mode not in QUEUE_MODES:
        raise PiError(f'Invalid mode "{mode}". Valid values: {", ".join(QUEUE_MODES)}')
    return mode


def _save_setting(session: AgentSession, key: str, value: Any) -> None:
    if session.settings is not None:
        session.settings.set(key, value)


def clamp_level(model: Model | None, level: str) -> str:
    """``clamp_thinking_level``, except that no model means ``off`` and an unrecognised level becomes
    the model's first supported one (a client may send anything)."""
    if model is None:
        return "off"
    if level not in THINKING_LEVELS:
        return supported_thinking_levels(model)[0]
    return clamp_thinking_level(model, level)


def next_thinking_level(model: Model | None, current: str) -> str | None:
    """The level after ``current`` in the supported cycle, wrapping; None without reasoning support."""
    if model is None or not model.reasoning:
        return None
    levels = supported_thinking_levels(model)
    index = levels.index(current) if current in levels else -1
    return levels[(index + 1) % len(levels)]
