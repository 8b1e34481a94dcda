"""``CacheWarmer``: keeps the prompt cache entry of a session's last request alive (the ``cacheWarming`` setting).

``wrap`` puts it around the session's stream function: each request the agent sends (re)starts a warming run;
shortly before the entry expires the warmer re-sends that request with a one-token output cap, if the refresh
pays for itself (``pi_core.llm.cache_warming.evaluate``), and records what it cost as a ``usage`` entry of kind
``cache_warm`` (counted in the session's totals, never part of the context). A run ends when the conversation
moves on without a new request (a compaction, a new session, another model), an hour after its request
(30 minutes once the agent is idle), when the mode forbids it, or when the session shuts down.

``PI_CACHE_WARMING_TIME_SCALE`` (tests only) runs the warmer's clock that many times faster.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pi_core.events import AgentEvent
from pi_core.llm.cache_warming import (
    MAX_IDLE_AGE_MS,
    MAX_STREAMING_AGE_MS,
    Action,
    Decision,
    Phase,
    WarmingStatus,
    evaluate,
    is_replayable,
    prompt_cache_ttl_ms,
    refresh_delay_ms,
    refresh_options,
    retention_of,
)
from pi_core.signals import AbortSignal
from pi_core.types import AssistantMessage

if TYPE_CHECKING:
    from pi_core.providers import StreamOptions
    from pi_core.session import AgentSession
    from pi_core.sessions.manager import SessionManager
    from pi_core.types import AgentMessage, AssistantMessageEvent, Context, Model

StreamFn = Callable[["Model", "Context", "StreamOptions"], AsyncIterator["AssistantMessageEvent"]]
TIME_SCALE_ENV = "PI_CACHE_WARMING_TIME_SCALE"


@dataclass(frozen=True, repr=False)
class WarmingDecisionEvent:
    """What a ``cache_warming_decision`` handler sees: pi's estimates and its decision."""

    warm_cost: float
    miss_cost: float
    continuation_probability: float
    action: Action


Decide = Callable[[WarmingDecisionEvent], Awaitable[Action | None]]


class WarmingClock:
    """Wall-clock milliseconds (a timer that slept through a suspend must see the lost time), ``scale`` times
    faster than real time."""

    def __init__(self, scale: float = 1.0) -> None:
        self.scale = scale

    @classmethod
    def from_env(cls) -> WarmingClock:
        try:
            scale = float(os.environ.get(TIME_SCALE_ENV) or 1)
        except ValueError:
            scale = 1.0
        return cls(scale if scale > 0 else 1.0)

    def now_ms(self) -> float:
        return time.time() * 1000 * self.scale

    def call_later(self, delay_ms: float, callback: Callable[[], None]) -> asyncio.TimerHandle:
        return asyncio.get_running_loop().call_later(max(0.0, delay_ms) / 1000 / self.scale, callback)


@dataclass(eq=False, repr=False)
class _Run:
    """One warming run: the request to replay and its timing."""

    inner: StreamFn
    model: Model
    context: Context
    options: StreamOptions
    sent: list[AgentMessage]  # the session's messages when the request went out
    ttl_ms: float
    delay_ms: float
    started_at: float
    phase: Phase = "streaming"
    next_warm_at: float = 0.0
    refresh_deadline_at: float = 0.0
    signal: AbortSignal = field(default_factory=AbortSignal)
    timer: asyncio.TimerHandle | None = None
    task: asyncio.Future[None] | None = None
    extension_override: bool = False


class CacheWarmer:
    def __init__(self, mode: Callable[[], str], store: SessionManager, *, clock: WarmingClock | None = None,
                 decide: Decide | None = None) -> None:
        """``mode``: the ``cacheWarming`` setting, read at each step (``off`` / ``streaming`` / ``idle``);
        ``store``: the session file that records each refresh's usage."""
        self.mode = mode
        self.store = store
        self.clock = clock or WarmingClock.from_env()
        self.decide = decide
        self._session: AgentSession | None = None
        self._run: _Run | None = None
        self._inactive = WarmingStatus("inactive", "waiting for first request")

    def bind(self, session: AgentSession) -> None:
        """Warm ``session``'s requests: its messages and model tell whether a run is still current."""
        self._session = session
        session.subscribe(self._on_event)

    def wrap(self, inner: StreamFn, refresh: StreamFn | None = None) -> StreamFn:
        """``inner`` with each request starting a warming run; refreshes are sent through ``refresh`` (without
        the request-level retries of ``inner``), else ``inner``."""

        def stream(model: Model, context: Context, options: StreamOptions) -> AsyncIterator[AssistantMessageEvent]:
            self.start(refresh or inner, model, context, options)
            return inner(model, context, options)

        return stream

    # --- the run --------------------------------------------------------------------------------------------

    @property
    def status(self) -> WarmingStatus:
        if self.mode() == "off":
            return WarmingStatus("inactive", "cache warming disabled")
        run = self._run
        if run is None:
            return self._inactive
        if not self._is_current(run):
            return WarmingStatus("inactive", "conversation context changed")
        decision = self._evaluate(run)
        refreshing = run.timer is None
        if not decision.economics_available and not refreshing:
            return WarmingStatus("inactive", "cache economics unavailable")
        return WarmingStatus("refreshing" if refreshing else "scheduled", next_warm_at_ms=run.next_warm_at,
                             decision=decision, extension_override=run.extension_override)

    def start(self, inner: StreamFn, model: Model, context: Context, options: StreamOptions) -> None:
        """A real request is going out: it replaces the entry being kept warm."""
        self._clear()
        if self.mode() == "off":
            return self._stop("cache warming disabled")
        if self._session is None:
            return self._stop("no session to warm")
        if not is_replayable(model, options):
            return self._stop("request cannot be replayed safely")
        ttl = prompt_cache_ttl_ms(model, options)
        if ttl is None:
            disabled = retention_of(options) == "none"
            return self._stop("request disabled prompt caching" if disabled else "cache lifetime unavailable")
        delay = refresh_delay_ms(ttl)
        if delay is None:
            return self._stop("cache lifetime unavailable")
        self._run = _Run(inner, model, context, options, list(self._session.messages), ttl, delay,
                         started_at=self.clock.now_ms())
        self._schedule(self._run)

    def cancel(self) -> None:
        """The session ends: no refresh is sent from now on, one on its way is aborted."""
        self._stop("inactive")

    def on_mode_changed(self) -> None:
        """The ``cacheWarming`` setting changed: a run the new mode forbids ends now."""
        run = self._run
        reason = self._mode_stop_reason(run) if run is not None else None
        if reason:
            self._stop(reason)

    def _on_event(self, event: AgentEvent) -> None:
        run = self._run
        if event.type != "agent_settled" or run is None:
            return
        if self.mode() == "streaming":
            return self._stop("agent run settled")
        run.phase = "idle"
        deadline = run.started_at + MAX_IDLE_AGE_MS
        if run.next_warm_at > deadline or self.clock.now_ms() >= deadline:
            self._stop("30-minute idle safety limit reached")

    def _clear(self) -> None:
        run, self._run = self._run, None
        if run is not None:
            if run.timer is not None:
                run.timer.cancel()
            run.signal.abort()

    def _stop(self, reason: str, decision: Decision | None = None, override: bool = False) -> None:
        self._clear()
        self._inactive = WarmingStatus("inactive", reason, decision=decision, extension_override=override)

    def _schedule(self, run: _Run) -> None:
        now = self.clock.now_ms()
        run.extension_override = False
        run.next_warm_at = now + run.delay_ms
        # A late timer (a suspend, a blocked loop) may keep half the planned margin; later than that the refresh
        # would most likely write a new entry at full price instead of reading the old one.
        run.refresh_deadline_at = run.next_warm_at + (run.ttl_ms - run.delay_ms) // 2
        idle = run.phase == "idle"
        deadline = run.started_at + (MAX_IDLE_AGE_MS if idle else MAX_STREAMING_AGE_MS)
        if run.next_warm_at > deadline or now >= deadline:
            return self._stop("30-minute idle safety limit reached" if idle else "one-hour safety limit reached")
        run.timer = self.clock.call_later(run.next_warm_at - now, lambda: self._fire(run))

    def _fire(self, run: _Run) -> None:
        run.timer = None
        run.task = asyncio.ensure_future(self._refresh(run))

    async def _refresh(self, run: _Run) -> None:
        if not self._valid(run) or self._deadline_missed(run):
            return
        decision = self._evaluate(run)
        action: Action = decision.action
        if self.decide is not None:
            try:
                chosen = await self.decide(WarmingDecisionEvent(decision.warm_cost, decision.miss_cost,
                                                                decision.continuation_probability, action))
                action = chosen if chosen in ("warm", "stop") else action
            except Exception:  # noqa: BLE001, S110 - a failing handler leaves pi's own decision standing
                pass
        if not self._valid(run) or self._deadline_missed(run):
            return
        override = action != decision.action
        if action == "stop":
            reason = "stopped by extension" if override else "expected savings below threshold" \
                if decision.economics_available else "cache economics unavailable"
            return self._stop(reason, decision, override)
        run.extension_override = override
        try:
            message = await _final(run.inner(run.model, run.context, refresh_options(run.options, run.signal)))
        except Exception:  # noqa: BLE001 - warming is best effort: the session goes on without it
            message = None
        if not self._valid(run):
            return
        if message is not None and message.stop_reason not in ("error", "aborted"):
            self._record(message, "extension override" if override else None)
        if self._run is run:
            self._schedule(run)

    def _record(self, message: AssistantMessage, note: str | None) -> None:
        usage = message.usage.model_dump(mode="json", by_alias=True, exclude_none=True)
        try:
            entry_id = self.store.append_usage("cache_warm", message.provider, message.model, usage, note)
        except OSError:
            return  # a full disk: the session's own save reports it
        if self._session is not None:
            self._session.emit_later(AgentEvent("entry_appended", entry=self.store.get_entry(entry_id)))

    def _deadline_missed(self, run: _Run) -> bool:
        if self.clock.now_ms() <= run.refresh_deadline_at:
            return False
        self._stop("cache refresh deadline missed")
        return True

    def _valid(self, run: _Run) -> bool:
        if self._run is not run:
            return False
        reason = self._mode_stop_reason(run) or (None if self._is_current(run) else "conversation context changed")
        if reason is None:
            return True
        self._stop(reason)
        return False

    def _mode_stop_reason(self, run: _Run) -> str | None:
        mode = self.mode()
        if mode == "off":
            return "cache warming disabled"
        if mode == "streaming" and run.phase == "idle":
            return "agent run settled"
        return None

    def _is_current(self, run: _Run) -> bool:
        """The session still shows the request's model, and its messages still begin with those sent."""
        session = self._session
        if session is None:
            return False
        model, now = session.model, session.messages
        return model.provider == run.model.provider and model.id == run.model.id and len(run.sent) <= len(now) \
            and all(a is b for a, b in zip(run.sent, now, strict=False))

    def _evaluate(self, run: _Run) -> Decision:
        return evaluate(run.model, _prompt_tokens(self._session), run.phase)


def _prompt_tokens(session: AgentSession | None) -> int:
    """The prompt size of the session's latest reply, as its provider reported it."""
    for message in reversed(session.messages if session is not None else []):
        if isinstance(message, AssistantMessage):
            usage = message.usage
            return usage.input + usage.cache_read + usage.cache_write
    return 0


async def _final(events: AsyncIterator[AssistantMessageEvent]) -> AssistantMessage | None:
    final = None
    async for event in events:
        final = event.final or final
    return final


__all__ = ["TIME_SCALE_ENV", "CacheWarmer", "WarmingClock", "WarmingDecisionEvent"]
