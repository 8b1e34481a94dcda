"""auto_commit_on_exit: when the session ends, commits every change with the last reply's first line as message."""

from __future__ import annotations

from pi_core import MessageEntry, SessionEntry, hookimpl
from pi_core.extension import ExtensionContext
from pi_core.types import AssistantMessage, TextContent

SUBJECT_LIMIT = 50


def last_reply_text(entries: list[SessionEntry]) -> str:
    for entry in reversed(entries):
        if isinstance(entry, MessageEntry) and isinstance(entry.message, AssistantMessage):
            return "\n".join(part.text for part in entry.message.content if isinstance(part, TextContent))
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
