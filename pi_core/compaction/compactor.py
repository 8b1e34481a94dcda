"""Running compactions: manual ``/compact``, threshold and overflow recovery, with their events
(docs/sessions.md#compaction).

``Compactor`` owns the once-per-user-message overflow guard and emits ``compaction_start`` /
``compaction_end`` events; the runtime owns the agent, so after a compaction it replaces the agent's
messages with ``manager.build_session_context()`` and, when told to, continues the run.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pi_core.compaction.tokens import (
    calculate_context_tokens,
    estimate_context_tokens,
    should_compact,
)
from pi_core.errors import AbortedError
from pi_core.hookspecs.results import CompactionResult
from pi_core.sessions.errors import SessionError
from pi_core.sessions.format import Entry, MessageLike, message_to_dict, ms_from_iso
from pi_core.types import CompactionSettings

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from pi_core.compaction.branch_summary import NavigationResult
    from pi_core.compaction.summarize import Summarize
    from pi_core.events import AgentEvent
    from pi_core.hookspecs.results import TreePreparation
    from pi_core.providers import StreamOptions
    from pi_core.registry import PluginSet
    from pi_core.session.parts import CompactingSession, CompactionHook
    from pi_core.session_host import ContextUsage
    from pi_core.sessions.manager import SessionManager
    from pi_core.signals import AbortSignal
    from pi_core.types import AssistantMessage, AssistantMessageEvent, Context, Model

log = logging.getLogger("pi.sessions")

OVERFLOW_GAVE_UP = (
    "Context overflow recovery failed after one compact-and-retry attempt. "
    "Try reducing context or switching to a larger-context model."
)


class CompactionCancelled(SessionError):
    """Raised by a ``pi_session_compact`` hook (or an abort) to cancel a compaction."""

    def __init__(self, message: str = "Compaction cancelled") -> None:
        super().__init__(message)


@dataclass(eq=False, repr=False)
class CompactionOutcome:
    """A stored compaction: the result, the new entry, whether a hook produced it and what the runtime should do."""

    result: CompactionResult
    entry: Entry
    from_hook: bool
    reason: str
    will_retry: bool = False


Emit = Callable[["AgentEvent"], object]
Hook = Callable[..., object]


def _event(kind: str, **fields: Any) -> Any:
    from pi_core.events import AgentEvent

    return AgentEvent(kind, **fields)


class Compactor:
    """Compacts one session. ``summarize`` is the LLM call; the plugins' hooks come from the session
    (``use_hook``: ``pi_session_before_compact`` with the plugin context) and from ``plugins`` (the deprecated
    ``pi_session_compact``); ``hook`` is a bare legacy hook caller (tests). ``emit`` receives AgentEvents."""

    def __init__(
        self,
        manager: SessionManager,
        summarize: Summarize,
        *,
        settings: Callable[[Model | None], CompactionSettings] | CompactionSettings | None = None,
        emit: Emit | None = None,
        hook: Hook | None = None,
        plugins: PluginSet | None = None,
        is_context_overflow: Callable[[dict[str, Any], int], bool] | None = None,  # open: the reply as Pi's JSON
        on_hook_error: Callable[[BaseException], None] | None = None,
    ) -> None:
        self.manager = manager
        self.summarize = summarize
        self._settings = settings or CompactionSettings()
        self._listeners: list[Emit] = [emit] if emit is not None else []
        self._hook = hook
        self._plugins = plugins
        self._session_hook: CompactionHook | None = None
        self._is_overflow = is_context_overflow
        self._on_hook_error = on_hook_error
        self.overflow_recovery_attempted = False
        self.running = False  # a compaction (or the check for one) is under way: the session is not idle

    def use_hook(self, hook: CompactionHook) -> None:
        """The session's ``pi_session_before_compact`` caller (it owns the plugin context)."""
        self._session_hook = hook

    def subscribe(self, listener: Emit) -> None:
        """Receive the ``compaction_start`` / ``compaction_end`` events (the session forwards them)."""
        self._listeners.append(listener)

    def _emit(self, event: Any) -> None:
        for listener in list(self._listeners):
            listener(event)

    @property
    def settings(self) -> CompactionSettings:
        """The settings without a model in view (``compaction.modelOverrides`` do not apply)."""
        return self.settings_for(None)

    def settings_for(self, model: Model | None) -> CompactionSettings:
        """The settings for ``model``: a callable ``settings`` applies its per-model overrides."""
        return self._settings(model) if callable(self._settings) else self._settings

    def reset_overflow_guard(self) -> None:
        """Call on each new user message and after a successful reply: overflow recovery may run again."""
        self.overflow_recovery_attempted = False

    # --- the compaction itself -------------------------------------------------------------------

    async def _run(
        self,
        model: Model,
        reason: str,
        thinking_level: str | None,
        custom_instructions: str | None,
        signal: AbortSignal | None,
    ) -> CompactionOutcome | None:
        # Imported here: the planner loads when a compaction runs, not on every start.
        from pi_core.compaction.plan import prepare_compaction
        from pi_core.signals import AbortSignal as Signal

        signal = signal or Signal()
        path = self.manager.get_branch()
        preparation = prepare_compaction(path, self.settings_for(model))
        if preparation is None:
            if reason != "manual":
                return None
            if path and path[-1].get("type") == "compaction":
                raise SessionError("Already compacted")
            raise SessionError("Nothing to compact (session too small)")
        result = await self._from_hook(preparation, path, custom_instructions, signal, reason)
        from_hook = result is not None
        if result is None:
            from pi_core.compaction.summarize import compact

            result = await compact(
                preparation, model, self.summarize, custom_instructions=custom_instructions, signal=signal,
                thinking_level=thinking_level,
            )
        if signal.aborted:
            raise CompactionCancelled()
        self.manager.append_compaction(
            result.summary, result.first_kept_entry_id, result.tokens_before, result.details, from_hook,
            result.usage.to_json() if result.usage is not None else None,
        )
        entry = self.manager.leaf_entry() or {}
        return CompactionOutcome(result=result, entry=entry, from_hook=from_hook, reason=reason)

    async def _from_hook(
        self, preparation: Any, path: list[Entry], custom_instructions: str | None, signal: AbortSignal,
        reason: str = "manual",
    ) -> CompactionResult | None:
        from pi_core.hookspecs.results import Cancel

        result: Any = None
        if self._session_hook is not None:
            result = await self._session_hook(preparation, path, custom_instructions, reason, signal)
        if result is None and (self._hook is not None or (self._plugins is not None
                                                           and self._plugins.has("pi_session_compact"))):
            result = await self._legacy_hook(preparation, path, custom_instructions, signal)
        if isinstance(result, Cancel):
            raise CompactionCancelled(result.reason or "Compaction cancelled")
        if isinstance(result, dict):
            from pi_core.types import Usage

            result = CompactionResult(
                summary=result["summary"],
                first_kept_entry_id=result["firstKeptEntryId"],
                tokens_before=result["tokensBefore"],
                details=result.get("details"),
                usage=Usage.model_validate(result["usage"]) if result.get("usage") else None,
            )
        return result  # type: ignore[no-any-return]

    async def _legacy_hook(self, preparation: Any, path: list[Entry], custom_instructions: str | None,
                           signal: AbortSignal) -> Any:
        """``pi_session_compact`` (deprecated): raising CompactionCancelled cancels."""
        args = {"preparation": preparation, "branch_entries": path, "custom_instructions": custom_instructions,
                "signal": signal}
        if self._hook is None:
            assert self._plugins is not None  # _from_hook comes here with a hook or with plugins
            def cancelled(_plugin: str, err: BaseException) -> None:
                if isinstance(err, CompactionCancelled):
                    raise err
                if self._on_hook_error:
                    self._on_hook_error(err)

            return await self._plugins.call("pi_session_compact", quiet=(CompactionCancelled,), on_error=cancelled,
                                            **args)
        try:
            result = self._hook(**args)
            if inspect.isawaitable(result):
                result = await result
        except CompactionCancelled:
            raise
        except Exception as err:  # noqa: BLE001 - a broken plugin must not block compaction: report it, use pi's summary
            log.warning("Compaction hook failed: %s", err)
            if self._on_hook_error:
                self._on_hook_error(err)
            return None
        return result

    # --- what plugins ask of the session ---------------------------------------------------------

    def context_usage(self, messages: Sequence[MessageLike], model: Model) -> ContextUsage:
        """``ctx.get_context_usage()``: the last reply's usage plus estimates of what followed it."""
        from pi_core.session_host import ContextUsage

        window = getattr(model, "context_window", 0) or 0
        tokens = estimate_context_tokens(messages).tokens
        return ContextUsage(tokens=tokens, context_window=window,
                            percent=round(tokens / window * 100, 1) if window else None)

    def prepare_tree(self, target_id: str | None, *, summarize: bool, custom_instructions: str | None,
                     replace_instructions: bool, label: str | None) -> TreePreparation:
        from pi_core.compaction.branch_summary import collect_entries_for_branch_summary
        from pi_core.hookspecs.entries import entry_from_json
        from pi_core.hookspecs.results import TreePreparation

        old = self.manager.leaf_id
        entries, ancestor = collect_entries_for_branch_summary(self.manager, old, target_id) \
            if target_id else (self.manager.get_branch(old) if old else [], None)
        return TreePreparation(target_id=target_id, old_leaf_id=old, common_ancestor_id=ancestor,
                               entries_to_summarize=[entry_from_json(entry) for entry in entries],
                               user_wants_summary=summarize,
                               custom_instructions=custom_instructions, replace_instructions=replace_instructions,
                               label=label)

    async def navigate(self, preparation: TreePreparation, model: Model | None, *, summary: str | None = None,
                       details: Any = None, signal: AbortSignal | None = None) -> NavigationResult:  # open: plugin-defined details, stored in the session JSON
        """Move the leaf as ``preparation`` says; ``summary`` (a plugin's) replaces pi's branch summary."""
        from pi_core.compaction.branch_summary import navigate_tree

        if preparation.target_id is None:
            raise SessionError("No entry to navigate to")
        return await navigate_tree(
            self.manager, preparation.target_id, summarize=preparation.user_wants_summary, model=model,
            summarizer=self.summarize, custom_instructions=preparation.custom_instructions,
            replace_instructions=preparation.replace_instructions, label=preparation.label, signal=signal,
            summary=(summary, details) if summary is not None else None)

    async def compact(
        self,
        model: Model | None,
        *,
        thinking_level: str | None = None,
        custom_instructions: str | None = None,
        signal: AbortSignal | None = None,
    ) -> CompactionOutcome:
        """Manual compaction (``/compact [text]``, RPC ``compact``). Emits events; raises on failure."""
        self.running = True
        try:
            return await self._compact(model, thinking_level, custom_instructions, signal)
        finally:
            self.running = False

    async def _compact(self, model: Model | None, thinking_level: str | None, custom_instructions: str | None,
                       signal: AbortSignal | None) -> CompactionOutcome:
        self._emit(_event("compaction_start", reason="manual"))
        try:
            if model is None:
                raise SessionError("No model selected")
            outcome = await self._run(model, "manual", thinking_level, custom_instructions, signal)
            assert outcome is not None  # manual mode raises instead of returning None
        except (CompactionCancelled, AbortedError):
            self._emit(_event("compaction_end", reason="manual", aborted=True, will_retry=False))
            raise
        except Exception as err:
            self._emit(
                _event("compaction_end", reason="manual", aborted=False, will_retry=False,
                       error_message=f"Compaction failed: {err}")
            )
            raise
        self._emit(_event("compaction_end", reason="manual", result=outcome.result, aborted=False, will_retry=False))
        return outcome

    async def run_auto(
        self,
        model: Model | None,
        reason: str,
        *,
        thinking_level: str | None = None,
        signal: AbortSignal | None = None,
        retry: bool = True,
    ) -> CompactionOutcome | None:
        """Automatic compaction for ``reason`` "threshold" or "overflow"; never raises, reports by event.
        ``retry=False``: an overflow seen on a completed reply, which is compacted but not run again."""
        will_retry = reason == "overflow" and retry
        self._emit(_event("compaction_start", reason=reason))
        try:
            outcome = await self._run(model, reason, thinking_level, None, signal) if model is not None else None
        except (CompactionCancelled, AbortedError):
            self._emit(_event("compaction_end", reason=reason, aborted=True, will_retry=False))
            return None
        except Exception as err:  # noqa: BLE001 - automatic compaction reports by event and never raises
            prefix = "Context overflow recovery failed" if reason == "overflow" else "Auto-compaction failed"
            self._emit(
                _event("compaction_end", reason=reason, aborted=False, will_retry=False, error_message=f"{prefix}: {err}")
            )
            return None
        if outcome is None:
            self._emit(_event("compaction_end", reason=reason, aborted=False, will_retry=False))
            return None
        outcome.will_retry = will_retry
        self._emit(_event("compaction_end", reason=reason, result=outcome.result, aborted=False, will_retry=will_retry))
        return outcome

    # --- triggers --------------------------------------------------------------------------------

    def _overflow(self, message: dict[str, Any], context_window: int) -> bool:
        check = self._is_overflow
        if check is None:
            from pi_core.llm.overflow import is_context_overflow
            from pi_core.types import message_from_json

            return is_context_overflow(message_from_json(message), context_window)  # type: ignore[arg-type]
        return check(message, context_window)

    def auto_reason(
        self,
        assistant_message: MessageLike,
        model: Model | None,
        agent_messages: Sequence[MessageLike],
        *,
        skip_aborted: bool = True,
    ) -> str | None:
        """Which automatic compaction the last reply calls for: "overflow", "threshold" or None.

        Call after each run (``skip_aborted=True``) and before each prompt (``skip_aborted=False``).
        A second overflow in a row emits the give-up ``compaction_end`` here and returns None.
        """
        settings = self.settings_for(model)
        message = message_to_dict(assistant_message)
        if not settings.enabled or (skip_aborted and message.get("stopReason") == "aborted"):
            return None
        window = getattr(model, "context_window", 0) or 0
        compaction = self.manager.latest_compaction()
        compaction_ms = ms_from_iso(compaction.get("timestamp", "")) if compaction else None
        if compaction_ms is not None and (message.get("timestamp") or 0) <= compaction_ms:
            return None  # usage from before the latest compaction describes the old, larger context
        same_model = model is not None and message.get("provider") == model.provider and message.get("model") == model.id
        if same_model and self._overflow(message, window):
            if message.get("stopReason") == "stop":
                return "overflow"  # a completed reply that reports more than the window: compact, never re-run
            if self.overflow_recovery_attempted:
                self._emit(
                    _event("compaction_end", reason="overflow", aborted=False, will_retry=False,
                           error_message=OVERFLOW_GAVE_UP)
                )
                return None
            self.overflow_recovery_attempted = True
            return "overflow"
        if message.get("stopReason") == "error":
            estimate = estimate_context_tokens(agent_messages)
            if estimate.last_usage_index is None:
                return None
            usage_message = message_to_dict(agent_messages[estimate.last_usage_index])
            if compaction_ms is not None and (usage_message.get("timestamp") or 0) <= compaction_ms:
                return None
            tokens = estimate.tokens
        else:
            tokens = calculate_context_tokens(message.get("usage") or {})
        if should_compact(tokens, window, settings.enabled, settings.reserve_tokens):
            return "threshold"
        return None

    async def after_turn(self, session: CompactingSession, *, skip_aborted: bool) -> bool:
        """Auto-compaction for an ``AgentSession``: after a reply (``skip_aborted``) or before a prompt. When it
        compacted, the session's messages are rebuilt from the store; True when the run should continue now (a
        retry after an overflow, or queued messages), the failed reply taken off the end first."""
        last = session.last_assistant()
        if last is None:
            return False
        self.running = True
        try:
            outcome = await self.check(last, session.model, session.messages, skip_aborted=skip_aborted,
                                       thinking_level=session.thinking_level)
        finally:
            self.running = False
        if outcome is None:
            return False
        session.reload_messages()
        if not (skip_aborted and (outcome.will_retry or session.has_queued_messages())):
            return False
        session.agent.drop_trailing_error()
        return True

    async def check(
        self,
        assistant_message: MessageLike,
        model: Model | None,
        agent_messages: Sequence[MessageLike],
        *,
        thinking_level: str | None = None,
        skip_aborted: bool = True,
        signal: AbortSignal | None = None,
    ) -> CompactionOutcome | None:
        """``auto_reason`` then ``run_auto`` (``after_turn`` acts on the outcome for a session)."""
        reason = self.auto_reason(assistant_message, model, agent_messages, skip_aborted=skip_aborted)
        if reason is None:
            return None
        # A reply that completed is the run's answer: there is nothing to retry, and continuing from an
        # assistant message is impossible (docs/sessions.md#triggers).
        completed = message_to_dict(assistant_message).get("stopReason") == "stop"
        return await self.run_auto(model, reason, thinking_level=thinking_level, signal=signal, retry=not completed)


def llm_summarizer(stream_fn: Callable[[Model, Context, StreamOptions], AsyncIterator[AssistantMessageEvent]],
                   api_key_for: Callable[[Model], str | None] | None = None) -> Summarize:
    """A ``Summarize`` that makes one complete LLM call through ``stream_fn`` (the session's providers)."""

    async def summarize(model: Model, context: Context, options: StreamOptions) -> AssistantMessage:
        from pi_core.types import AssistantMessage

        if options.api_key is None and api_key_for is not None:
            options.api_key = api_key_for(model)
        final: AssistantMessage | None = None
        async for event in stream_fn(model, context, options):
            if event.type in ("done", "error"):
                final = event.final
        return final or AssistantMessage(api=model.api, provider=model.provider, model=model.id,
                                         stop_reason="error", error_message="The provider ended the stream early")

    return summarize
