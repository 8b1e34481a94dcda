"""Totals over every entry of a session file (all branches), for the export's header."""

from __future__ import annotations

from dataclasses import dataclass, field

from pi_core.sessions.format import Entry
from pi_core.sessions.usage import UsageTotals


def format_tokens(count: int) -> str:
    """1234 -> ``1.2k``, 56789 -> ``57k``, 1234567 -> ``1.2M``."""
    if count < 1000:
        return str(count)
    if count < 10_000:
        return f"{count / 1000:.1f}k"
    if count < 1_000_000:
        return f"{round(count / 1000)}k"
    return f"{count / 1_000_000:.1f}M"


@dataclass
class SessionStats(UsageTotals):
    user: int = 0
    assistant: int = 0
    tool_results: int = 0
    custom: int = 0
    compactions: int = 0
    branch_summaries: int = 0
    tool_calls: int = 0
    models: list[str] = field(default_factory=list)

    def messages_summary(self) -> str:
        parts = [
            (self.user, "user"), (self.assistant, "assistant"), (self.tool_results, "tool results"),
            (self.custom, "custom"), (self.compactions, "compactions"), (self.branch_summaries, "branch summaries"),
        ]
        return ", ".join(f"{count} {name}" for count, name in parts if count)

    def tokens_summary(self) -> str:
        parts = [(self.input, "↑"), (self.output, "↓"), (self.cache_read, "R"), (self.cache_write, "W")]
        return " ".join(f"{mark}{format_tokens(count)}" for count, mark in parts if count)


def session_stats(entries: list[Entry]) -> SessionStats:
    stats = SessionStats()
    for entry in entries:
        kind = entry.get("type")
        if kind == "compaction":
            stats.compactions += 1
        elif kind == "branch_summary":
            stats.branch_summaries += 1
        elif kind == "custom_message":
            stats.custom += 1
        elif kind == "usage":  # billed outside the conversation: a cache refresh
            stats.add_json(entry.get("usage"))
        message = entry.get("message") if kind == "message" else None
        if not isinstance(message, dict):
            continue
        role = message.get("role")
        if role == "user":
            stats.user += 1
        elif role == "toolResult":
            stats.tool_results += 1
        elif role == "assistant":
            stats.assistant += 1
            if message.get("model"):
                model = f"{message['provider']}/{message['model']}" if message.get("provider") else str(message["model"])
                if model not in stats.models:
                    stats.models.append(model)
            content = message.get("content")
            if isinstance(content, list):
                stats.tool_calls += sum(1 for b in content if isinstance(b, dict) and b.get("type") == "toolCall")
            stats.add_json(message.get("usage"))
    return stats
