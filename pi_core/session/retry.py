"""Agent-level auto-retry (docs/sessions.md#auto-retry): a run that ended in a retryable provider error is
continued after a backoff, each attempt announced (``auto_retry_start`` / ``auto_retry_end``).

It is the session's, as in Pi: the kernel's Agent runs once; the policy (``AutoRetry``: which errors, how
many attempts, what delay) is handed in at build (``pi_core.llm.retry.AgentRetry``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from pi_core.events import AgentEvent
from pi_core.signals import AbortSignal

if TYPE_CHECKING:
    from pi_core.agent import Agent
    from pi_core.session.parts import AutoRetry


class RetryingRuns:
    """Runs of one agent with agent-level retry; ``cancel`` ends the wait before the next attempt."""

    def __init__(self, agent: Agent) -> None:
        self.agent = agent
        self._cancel: AbortSignal | None = None

    @property
    def waiting(self) -> bool:
        """Waiting before a retry (``cancel`` ends the wait)."""
        return self._cancel is not None

    def cancel(self) -> None:
        if self._cancel is not None:
            self._cancel.abort()

    async def run(self, start: Callable[[], Awaitable[None]], retry: AutoRetry | None) -> bool:
        """Run ``start``, then retry retryable provider errors with ``retry``'s backoff. False when ``cancel``
        ended a wait."""
        agent = self.agent
        await start()
        attempt = 0
        while True:
            last = agent.last_assistant()
            if last is None or retry is None or not retry.enabled or not retry.should_retry(last):
                if attempt and last is not None and last.stop_reason != "error":
                    await agent.emit(AgentEvent("auto_retry_end", success=True, attempt=attempt))
                return True
            attempt += 1
            if attempt > retry.max_retries:
                await agent.emit(AgentEvent("auto_retry_end", success=False, attempt=retry.max_retries,
                                            final_error=last.error_message))
                return True
            delay_ms = retry.delay_ms(attempt)
            await agent.emit(AgentEvent("auto_retry_start", attempt=attempt, max_attempts=retry.max_retries,
                                        delay_ms=delay_ms, error_message=last.error_message))
            agent.drop_trailing_error()
            self._cancel = cancel = AbortSignal()
            try:
                await asyncio.wait_for(cancel.wait(), delay_ms / 1000)
            except TimeoutError:
                pass
            finally:
                self._cancel = None
            if cancel.aborted:
                await agent.emit(AgentEvent("auto_retry_end", success=False, attempt=attempt,
                                            final_error="Retry cancelled"))
                return False
            await agent.continue_()
