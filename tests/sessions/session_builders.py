"""Builders for session entries and messages used across the session tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).parent / "fixtures"  # real version-1 files written by Pi
TS = "2025-01-01T00:00:00.000Z"


def user(text: str, ts: int = 1) -> dict[str, Any]:
    return {"role": "user", "content": text, "timestamp": ts}


def assistant(text: str = "ok", ts: int = 1, *, provider: str = "anthropic", model: str = "claude-test",
              stop: str = "stop", usage_total: int = 2, tool_calls: list[dict[str, Any]] | None = None,
              error: str | None = None) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    content += tool_calls or []
    message: dict[str, Any] = {
        "role": "assistant",
        "content": content,
        "api": "anthropic-messages",
        "provider": provider,
        "model": model,
        "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": usage_total,
                  "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
        "stopReason": stop,
        "timestamp": ts,
    }
    if error:
        message["errorMessage"] = error
    return message


def tool_call(call_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {"type": "toolCall", "id": call_id, "name": name, "arguments": arguments}


def tool_result(call_id: str, name: str, text: str, ts: int = 1) -> dict[str, Any]:
    return {"role": "toolResult", "toolCallId": call_id, "toolName": name,
            "content": [{"type": "text", "text": text}], "isError": False, "timestamp": ts}


def msg(entry_id: str, parent: str | None, role: str, text: str) -> dict[str, Any]:
    message = user(text) if role == "user" else assistant(text)
    return {"type": "message", "id": entry_id, "parentId": parent, "timestamp": TS, "message": message}


def compaction(entry_id: str, parent: str | None, summary: str, first_kept: str) -> dict[str, Any]:
    return {"type": "compaction", "id": entry_id, "parentId": parent, "timestamp": TS, "summary": summary,
            "firstKeptEntryId": first_kept, "tokensBefore": 1000}


def branch_summary(entry_id: str, parent: str | None, summary: str, from_id: str) -> dict[str, Any]:
    return {"type": "branch_summary", "id": entry_id, "parentId": parent, "timestamp": TS, "summary": summary,
            "fromId": from_id}
