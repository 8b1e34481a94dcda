"""``get_session_stats``: message counts, token and cost totals and context usage of the current context."""

from __future__ import annotations

from typing import Any

from pi_core.types import AssistantMessage, ToolResultMessage, UserMessage


def session_stats(session: Any) -> dict[str, Any]:
    messages = list(session.messages)
    store = session.store
    tokens = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}
    cost = 0.0
    tool_calls = 0
    for message in messages:
        if not isinstance(message, AssistantMessage):
            continue
        tool_calls += sum(1 for block in message.content if block.type == "toolCall")
        usage = message.usage
        tokens["input"] += usage.input
        tokens["output"] += usage.output
        tokens["cacheRead"] += usage.cache_read
        tokens["cacheWrite"] += usage.cache_write
        cost += usage.cost.total
    data: dict[str, Any] = {}
    if store.is_persisted and store.session_file is not None:
        data["sessionFile"] = str(store.session_file)
    data.update(
        sessionId=store.session_id,
        userMessages=sum(1 for m in messages if isinstance(m, UserMessage)),
        assistantMessages=sum(1 for m in messages if isinstance(m, AssistantMessage)),
        toolCalls=tool_calls,
        toolResults=sum(1 for m in messages if isinstance(m, ToolResultMessage)),
        totalMessages=len(messages),
        tokens={**tokens, "total": sum(tokens.values())},
        cost=cost,
    )
    usage = context_usage(session)
    if usage is not None:
        data["contextUsage"] = usage
    return data


def context_usage(session: Any) -> dict[str, Any] | None:
    """``{tokens, contextWindow, percent}``. After a compaction the last usage describes a context that
    no longer exists, so tokens/percent are None until an assistant replies after the compaction entry."""
    model = session.model
    window = getattr(model, "context_window", 0) if model is not None and model.id != "unknown" else 0
    if not window or window <= 0:
        return None
    from pi_core.sessions.compaction import latest_compaction
    from pi_core.sessions.tokens import calculate_context_tokens, estimate_context_tokens, last_assistant_usage

    branch = session.store.get_branch()
    compaction = latest_compaction(branch)
    if compaction is not None:
        after = branch[next(i for i, e in enumerate(branch) if e is compaction) + 1 :]
        usage = last_assistant_usage(after)
        if usage is None or calculate_context_tokens(usage) <= 0:
            return {"tokens": None, "contextWindow": window, "percent": None}
    estimate = estimate_context_tokens(list(session.messages))
    return {"tokens": estimate.tokens, "contextWindow": window, "percent": estimate.tokens / window * 100}
