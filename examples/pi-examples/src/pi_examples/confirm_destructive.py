"""confirm_destructive: asks before the session is cleared, switched or forked; a "no" vetoes it."""

from __future__ import annotations

from pi_core import Cancel, MessageEntry, hookimpl
from pi_core.extension import ExtensionContext

FORK_YES = "Yes, create fork"


def has_user_messages(ctx: ExtensionContext) -> bool:
    return any(isinstance(entry, MessageEntry) and entry.message.role == "user"
               for entry in ctx.session_manager.get_entries())


@hookimpl
async def pi_session_before_switch(ctx: ExtensionContext, reason: str) -> Cancel | None:
    if not ctx.has_ui:
        return None
    if reason == "new":
        if not await ctx.ui.confirm("Clear session?", "This will delete all messages in the current session."):
            ctx.ui.notify("Clear cancelled", "info")
            return Cancel()
        return None
    if has_user_messages(ctx) and not await ctx.ui.confirm(
            "Switch session?", "You have messages in the current session. Switch anyway?"):
        ctx.ui.notify("Switch cancelled", "info")
        return Cancel()
    return None


@hookimpl
async def pi_session_before_fork(ctx: ExtensionContext, entry_id: str | None) -> Cancel | None:
    if not ctx.has_ui:
        return None
    choice = await ctx.ui.select(f"Fork from entry {(entry_id or '')[:8]}?", [FORK_YES, "No, stay in current session"])
    if choice != FORK_YES:
        ctx.ui.notify("Fork cancelled", "info")
        return Cancel()
    return None
