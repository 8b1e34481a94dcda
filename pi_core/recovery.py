"""Auto-retry and compaction for AgentSession (docs/sessions.md#triggers, docs/sessions.md#auto-retry),
kept apart from the prompt path.

After each run, a retryable provider error is retried with Pi's backoff (``auto_retry_*`` events; the
failed reply stays in the session file but leaves the context), then the compactor checks the
threshold and overflow triggers. Manual ``/compact`` and the summariser's LLM call live here too.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pi_core.events import AgentEvent
from pi_core.providers import StreamOptions
from pi_core.signals import AbortSignal
from pi_core.types import AssistantMessage, Context, Model

if TYPE_CHECKING:
    from pi_core.agent import Agent
    from pi_core.plugins import PluginSet


class Recovery:
    """Mixed into AgentSession; uses its agent, store, settings and listeners."""

    if TYPE_CHECKING:
        agent: Agent
        plugins: PluginSet
        store: Any
        settings: Any
        retry_settings: Any
        auto_compaction: bool
        is_compacting: bool
        _compactor: Any
        _retry_cancel: AbortSignal | None

        async def _emit(self, event: AgentEvent) -> None: ...
        def emit_later(self, event: AgentEvent) -> None: ...
        def last_assistant(self) -> AssistantMessage | None: ...
        async def abort(self) -> None: ...
        @property
        def model(self) -> Model: ...
        @property
        def messages(self) -> list[Any]: ...
        api_key_for: Callable[[Model], str | None] | None
        config: Any

    @property
    def compactor(self) -> Any:
        """The Compactor (pi_core.compaction.compactor) over this session's file, settings and summariser hook."""
        if self._compactor is None:
            from pi_core.compaction.compactor import Compactor
            from pi_core.compaction.plan import CompactionSettings

            hook = self.plugins.pm.hook.pi_session_compact
            settings = (lambda: self.settings.compaction) if self.settings is not None else CompactionSettings()
            self._compactor = Compactor(self.store, self.summarize, settings=settings, emit=self.emit_later,
                                        hook=hook if hook.get_hookimpls() else None)
        return self._compactor

    def abort_retry(self) -> None:
        if self._retry_cancel is not None:
            self._retry_cancel.abort()

    # --- runs with auto-retry and auto-compaction (docs/sessions.md#auto-retry) ---------------

    async def _run_agent(self, start: Callable[[], Any]) -> None:
        """Run, then retry retryable provider errors with backoff, then check for compaction."""
        from pi_core.llm.retry import agent_retry_delay_ms, is_retryable_error

        await start()
        attempt = 0
        while True:
            last = self.last_assistant()
            settings = self.retry_settings
            if last is None or settings is None or not settings.enabled or not is_retryable_error(last):
                if attempt and last is not None and last.stop_reason != "error":
                    await self._emit(AgentEvent("auto_retry_end", success=True, attempt=attempt))
                break
            attempt += 1
            if attempt > settings.max_retries:
                await self._emit(AgentEvent("auto_retry_end", success=False, attempt=settings.max_retries,
                                            final_error=last.error_message))
                break
            delay_ms = agent_retry_delay_ms(settings.base_delay_ms, attempt)
            await self._emit(AgentEvent("auto_retry_start", attempt=attempt, max_attempts=settings.max_retries,
                                        delay_ms=delay_ms, error_message=last.error_message))
            self._drop_trailing_error()
            self._retry_cancel = cancel = AbortSignal()
            try:
                await asyncio.wait_for(cancel.wait(), delay_ms / 1000)
            except asyncio.TimeoutError:
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
        if not self.auto_compaction or last is None:
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

    async def summarize(self, model: Model, context: Context, options: StreamOptions) -> AssistantMessage:
        """One complete LLM call through this session's providers (used by compaction)."""
        if options.api_key is None and self.api_key_for is not None:
            options.api_key = self.config.api_key or self.api_key_for(model)
        final: AssistantMessage | None = None
        async for event in self.agent.stream_fn(model, context, options):  # type: ignore[misc]
            if event.type in ("done", "error"):
                final = event.final
        return final or AssistantMessage(api=model.api, provider=model.provider, model=model.id,
                                         stop_reason="error", error_message="The provider ended the stream early")
