"""git_checkpoint: a ``git stash create`` checkpoint at each turn, offered for restore when the session is forked."""

from __future__ import annotations

from pi_core import hookimpl
from pi_core.events import AgentEvent
from pi_core.extension import ExtensionContext
from pi_core.tools import ToolCallInfo, ToolResult

RESTORE = "Yes, restore code to that point"


class GitCheckpoint:
    """A class plugin: the checkpoints are this session's (one instance per session); a fork asks the session it
    leaves, whose instance still holds them."""

    def __init__(self) -> None:
        self.refs: dict[str, str] = {}  # entry id -> stash commit
        self.current_entry: str | None = None

    @hookimpl
    def pi_session_start(self) -> None:
        self.refs.clear()
        self.current_entry = None

    @hookimpl
    def pi_after_tool_call(self, ctx: ExtensionContext, call: ToolCallInfo, result: ToolResult) -> None:
        leaf = ctx.session_manager.leaf_entry()
        if leaf is not None:
            self.current_entry = leaf.id

    @hookimpl
    async def pi_agent_event(self, ctx: ExtensionContext, event: AgentEvent) -> None:
        if event.type == "turn_start":
            # Snapshot the working tree before the model changes it (a commit object; the stash list is untouched).
            ref = (await ctx.exec("git", ["stash", "create"])).stdout.strip()
            if ref and self.current_entry:
                self.refs[self.current_entry] = ref
        elif event.type == "agent_settled":
            self.refs.clear()

    @hookimpl
    async def pi_session_before_fork(self, ctx: ExtensionContext, entry_id: str | None) -> None:
        ref = self.refs.get(entry_id or "")
        if not ref or not ctx.has_ui:
            return  # without a UI, never restore on our own
        choice = await ctx.ui.select("Restore code state?", [RESTORE, "No, keep current code"])
        if choice is not None and choice.startswith("Yes"):
            await ctx.exec("git", ["stash", "apply", ref])
            ctx.ui.notify("Code restored to checkpoint", "info")
