"""``get_session_stats``: message counts, token and cost totals and context usage of the current context."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pi_core.sessions.usage import UsageTotals
from pi_core.types import AgentMessage, AssistantMessage, ToolResultMessage, UserMessage

if TYPE_CHECKING:
    from pi_core.session import AgentSession


@dataclass
class Totals(UsageTotals):
    context_tokens: int = 0  # what the last complete reply's request used: the current context size
    user_messages: int = 0
    assistant_messages: int = 0
    tool_calls: int = 0
    tool_results: int = 0


def session_totals(messages: Sequence[AgentMessage]) -> Totals:
    """Message counts and usage summed over ``messages`` (the RPC stats, the footer and /session)."""
    totals = Totals()
    for message in messages:
        if isinstance(message, UserMessage):
            totals.user_messages += 1
        elif isinstance(message, ToolResultMessage):
            totals.tool_results += 1
        elif isinstance(message, AssistantMessage):
            totals.assistant_messages += 1
            totals.tool_calls += len(message.tool_calls())
            usage = message.usage
            totals.input += usage.input
            totals.output += usage.output
            totals.cache_read += usage.cache_read
            totals.cache_write += usage.cache_write
            totals.cost += usage.cost.total
            if message.stop_reason not in ("aborted", "error"):
                totals.context_tokens = usage.input + usage.output + usage.cache_read + usage.cache_write
    return totals


def add_entry_usage(totals: Totals, branch: list[dict[str, Any]]) -> None:  # open: session entries and RPC answer data, JSON
    """Add what the branch's requests outside its context cost: compaction and branch summaries, and usage
    entries (cache refreshes)."""
    for entry in branch:
        if entry.get("type") in ("compaction", "branch_summary", "usage"):
            totals.add_json(entry.get("usage"))


def whole_session_usage(entries: list[dict[str, Any]]) -> Totals:  # open: session entries and RPC answer data, JSON
    """Tokens and cost of every entry of the session file, every branch included (Pi's footer): the replies,
    tool results that report usage, usage entries and the summaries. A /tree move changes none of it."""
    totals = Totals()
    for entry in entries:
        kind = entry.get("type")
        if kind == "message":
            message = entry.get("message")
            if isinstance(message, dict) and message.get("role") in ("assistant", "toolResult"):
                totals.add_json(message.get("usage"))
        elif kind in ("usage", "compaction", "branch_summary"):
            totals.add_json(entry.get("usage"))
    return totals


def session_stats(session: AgentSession) -> dict[str, Any]:  # open: session entries and RPC answer data, JSON
    messages = list(session.messages)
    store = session.store
    totals = session_totals(messages)
    add_entry_usage(totals, store.get_branch())
    tokens = {"input": totals.input, "output": totals.output, "cacheRead": totals.cache_read,
              "cacheWrite": totals.cache_write}
    data: dict[str, Any] = {}
    if store.is_persisted and store.session_file is not None:
        data["sessionFile"] = str(store.session_file)
    data.update(
        sessionId=store.session_id,
        userMessages=totals.user_messages,
        assistantMessages=totals.assistant_messages,
        toolCalls=totals.tool_calls,
        toolResults=totals.tool_results,
        totalMessages=len(messages),
        tokens={**tokens, "total": sum(tokens.values())},
        cost=totals.cost,
    )
    usage = context_usage(session)
    if usage is not None:
        data["contextUsage"] = usage
    return data


def context_usage(session: AgentSession) -> dict[str, Any] | None:  # open: session entries and RPC answer data, JSON
    """``{tokens, contextWindow, percent}``. After a compaction the last usage describes a context that
    no longer exists, so tokens/percent are None until an assistant replies after the compaction entry."""
    model = session.model
    window = getattr(model, "context_window", 0) if model is not None and model.id != "unknown" else 0
    if not window or window <= 0:
        return None
    from pi_core.compaction.plan import latest_compaction
    from pi_core.compaction.tokens import (
        calculate_context_tokens,
        estimate_context_tokens,
        last_assistant_usage,
    )

    branch = session.store.get_branch()
    compaction = latest_compaction(branch)
    if compaction is not None:
        after = branch[next(i for i, e in enumerate(branch) if e is compaction) + 1 :]
        usage = last_assistant_usage(after)
        if usage is None or calculate_context_tokens(usage) <= 0:
            return {"tokens": None, "contextWindow": window, "percent": None}
    estimate = estimate_context_tokens(list(session.messages))
    return {"tokens": estimate.tokens, "contextWindow": window, "percent": estimate.tokens / window * 100}
