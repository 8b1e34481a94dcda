"""RPC ``compact``: abort the running turn, compact the session branch, reload the agent's context."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pi_core.providers import StreamOptions
from pi_core.rpc.session_ops import setting
from pi_core.types import AssistantMessage, Context, Model

if TYPE_CHECKING:
    from pi_core.rpc.mode import RpcMode


def summarizer(session: Any) -> Any:
    """A ``Summarize`` callable over the session's own stream function (same provider, same key)."""

    async def summarize(model: Model, context: Context, options: StreamOptions) -> AssistantMessage:
        if options.api_key is None:
            options.api_key = session.config.api_key or _key_for(session, model)
        final: AssistantMessage | None = None
        async for event in session.agent.stream_fn(model, context, options):
            if event.type == "done":
                final = event.message
            elif event.type == "error":
                final = event.error
        if final is None:
            return AssistantMessage(api=model.api, provider=model.provider, model=model.id, stop_reason="error",
                                    error_message="The provider ended the stream without a reply")
        return final

    return summarize


def _key_for(session: Any, model: Model) -> str | None:
    lookup = getattr(session, "api_key_for", None)
    return lookup(model) if callable(lookup) else None


async def run_manual_compaction(mode: RpcMode, custom_instructions: str | None) -> dict[str, Any]:
    session, ops = mode.session, mode.ops
    own = getattr(session, "compact", None)
    if callable(own) and getattr(session, "compactor", None) is not None:
        result = await own(custom_instructions)
        return result.to_json() if hasattr(result, "to_json") else result
    from pi_core.sessions.auto import Compactor

    await mode.abort_run()
    compactor = Compactor(ops.store, summarizer(session), settings=compaction_settings(session),
                          emit=mode.emit_event)
    model = session.model if session.model.id != "unknown" else None
    ops.is_compacting = True
    try:
        outcome = await compactor.compact(model, thinking_level=session.agent.state.thinking_level,
                                          custom_instructions=custom_instructions)
    finally:
        ops.is_compacting = False
    session.agent.state.messages = ops.store.build_session_context().typed_messages()
    return outcome.result.to_json()


def compaction_settings(session: Any) -> Any:
    from pi_core.sessions.compaction import CompactionSettings

    defaults = CompactionSettings()
    return CompactionSettings(
        enabled=bool(setting(session, "compaction.enabled", defaults.enabled)),
        reserve_tokens=int(setting(session, "compaction.reserveTokens", defaults.reserve_tokens)),
        keep_recent_tokens=int(setting(session, "compaction.keepRecentTokens", defaults.keep_recent_tokens)),
    )
