"""auto_commit_on_exit: when the session ends, commits every change with the last reply's first line as message."""

from __future__ import annotations

from typing import Any

from pi_core import hookimpl
from pi_core.extension import ExtensionContext

SUBJECT_LIMIT = 50


def last_reply_text(entries: list[dict[str, Any]]) -> str:
    for entry in reversed(entries):
        message = entry.get("message", {})
        if entry.get("type") == "message" and message.get("role") == "assistant":
            content = message.get("content")
            if isinstance(content, list):
                return "\n".join(part.get("text", "") for part in content if part.get("type") == "text")
            return ""
    return ""


def commit_message(reply: str) -> str:
    first = reply.split("\n")[0] or "Work in progress"
    return f"[pi] {first[:SUBJECT_LIMIT]}{'...' if len(first) > SUBJECT_LIMIT else ''}"


@hookimpl
async def pi_session_shutdown(ctx: ExtensionContext) -> None:
    status = await ctx.exec("git", ["status", "--porcelain"])
    if status.code != 0 or not status.stdout.strip():
        return  # not a repository, or nothing to commit
    message = commit_message(last_reply_text(ctx.session_manager.get_entries()))
    await ctx.exec("git", ["add", "-A"])
    committed = await ctx.exec("git", ["commit", "-m", message])
    if committed.code == 0 and ctx.has_ui:
        ctx.ui.notify(f"Auto-committed: {message}", "info")
