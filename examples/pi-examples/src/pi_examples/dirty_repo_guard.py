"""dirty_repo_guard: refuses a new, switched or forked session while git has uncommitted changes."""

from __future__ import annotations

from pi_core import Cancel, hookimpl
from pi_core.extension import ExtensionContext

PROCEED = "Yes, proceed anyway"


async def check_dirty_repo(ctx: ExtensionContext, action: str) -> Cancel | None:
    status = await ctx.exec("git", ["status", "--porcelain"])
    if status.code != 0:
        return None  # not a git repository: nothing to protect
    changed = [line for line in status.stdout.strip().split("\n") if line]
    if not changed:
        return None
    if not ctx.has_ui:
        return Cancel()  # nobody to ask: keep the work safe
    choice = await ctx.ui.select(f"You have {len(changed)} uncommitted file(s). {action} anyway?",
                                 [PROCEED, "No, let me commit first"])
    if choice != PROCEED:
        ctx.ui.notify("Commit your changes first", "warning")
        return Cancel()
    return None


@hookimpl
async def pi_session_before_switch(ctx: ExtensionContext, reason: str) -> Cancel | None:
    return await check_dirty_repo(ctx, "new session" if reason == "new" else "switch session")


@hookimpl
async def pi_session_before_fork(ctx: ExtensionContext) -> Cancel | None:
    return await check_dirty_repo(ctx, "fork")
