"""git_checkpoint: a ``git stash create`` checkpoint at each turn, offered for restore when the session is forked."""

from __future__ import annotations

from dataclasses import dataclass, field

from pi_core import hookimpl
from pi_core.events import AgentEvent
from pi_core.extension import ExtensionContext
from pi_core.tools import ToolCallInfo, ToolResult

RESTORE = "Yes, restore code to that point"


@dataclass
class Checkpoints:
    refs: dict[str, str] = field(default_factory=dict)  # entry id -> stash commit
    current_entry: str | None = None


STATE = Checkpoints()


@hookimpl
def pi_session_start() -> None:
    STATE.refs.clear()
    STATE.current_entry = None


@hookimpl
def pi_after_tool_call(ctx: ExtensionContext, call: ToolCallInfo, result: ToolResult) -> None:
    leaf = ctx.session_manager.leaf_entry()
    if leaf is not None:
        STATE.current_entry = leaf.id


@hookimpl
async def pi_agent_event(ctx: ExtensionContext, event: AgentEvent) -> None:
    if event.type == "turn_start":
        # Snapshot the working tree before the model changes it (a commit object; the stash list is untouched).
        ref = (await ctx.exec("git", ["stash", "create"])).stdout.strip()
        if ref and STATE.current_entry:
            STATE.refs[STATE.current_entry] = ref
    elif event.type == "agent_settled":
        STATE.refs.clear()


@hookimpl
async def pi_session_before_fork(ctx: ExtensionContext, entry_id: str | None) -> None:
    ref = STATE.refs.get(entry_id or "")
    if not ref or not ctx.has_ui:
        return  # without a UI, never restore on our own
    choice = await ctx.ui.select("Restore code state?", [RESTORE, "No, keep current code"])
    if choice is not None and choice.startswith("Yes"):
        await ctx.exec("git", ["stash", "apply", ref])
        ctx.ui.notify("Code restored to checkpoint", "info")
