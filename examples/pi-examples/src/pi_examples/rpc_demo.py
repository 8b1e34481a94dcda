"""rpc_demo: uses every UI method that crosses RPC's extension-UI protocol (title, widget, status, dialogs, editor text)."""

from __future__ import annotations

import re

from pi_core import BeforeToolCall, Cancel, SlashCommand, hookimpl
from pi_core.events import AgentEvent
from pi_core.extension import CommandContext, ExtensionContext
from pi_core.tools import ToolCallInfo

STATUS = "rpc-demo"
DANGEROUS = (re.compile(r"\brm\s+(-rf?|--recursive)", re.IGNORECASE), re.compile(r"\bsudo\b", re.IGNORECASE))


async def rpc_input(args: str, ctx: CommandContext) -> None:
    value = await ctx.ui.input("Enter a value", "type something...")
    ctx.ui.notify(f"You entered: {value}" if value else "Input cancelled", "info")


async def rpc_editor(args: str, ctx: CommandContext) -> None:
    text = await ctx.ui.editor("Edit some text", "Line 1\nLine 2\nLine 3")
    if text:
        lines = len(text.split("\n"))
        ctx.ui.notify(f"Editor submitted ({lines} lines)", "info")
    else:
        ctx.ui.notify("Editor cancelled", "info")


def rpc_prefill(args: str, ctx: CommandContext) -> None:
    ctx.ui.set_editor_text("This text was set by the rpc-demo extension.")
    ctx.ui.notify("Editor prefilled", "info")


class RpcDemo:
    """A class plugin: the turn count is this session's (one instance per session)."""

    def __init__(self) -> None:
        self.turns = 0

    @hookimpl
    def pi_session_start(self, ctx: ExtensionContext, reason: str) -> None:
        self.turns = 0
        ctx.ui.set_title("pi RPC Demo (new session)" if reason == "new" else "pi RPC Demo")
        ctx.ui.set_widget("rpc-demo", ["--- RPC Extension UI Demo ---", "Loaded and ready."])
        ctx.ui.set_status(STATUS, f"Turns: {self.turns}")

    @hookimpl
    def pi_agent_event(self, ctx: ExtensionContext, event: AgentEvent) -> None:
        if event.type == "turn_start":
            self.turns += 1
            ctx.ui.set_status(STATUS, f"Turn {self.turns} running...")
        elif event.type == "turn_end":
            ctx.ui.set_status(STATUS, f"Turn {self.turns} done")

    @hookimpl
    async def pi_before_tool_call(self, ctx: ExtensionContext, call: ToolCallInfo) -> BeforeToolCall | None:
        if call.tool_name != "bash":
            return None
        command = str(call.args.get("command", ""))
        if not any(pattern.search(command) for pattern in DANGEROUS):
            return None
        if not ctx.has_ui:
            return BeforeToolCall(block=True, reason="Dangerous command blocked (no UI)")
        if await ctx.ui.select(f"Dangerous command: {command}", ["Allow", "Block"]) != "Allow":
            ctx.ui.notify("Command blocked by user", "warning")
            return BeforeToolCall(block=True, reason="Blocked by user")
        ctx.ui.notify("Command allowed", "info")
        return None

    @hookimpl
    async def pi_session_before_switch(self, ctx: ExtensionContext, reason: str) -> Cancel | None:
        if reason != "new" or not ctx.has_ui:
            return None
        if not await ctx.ui.confirm("Clear session?", "All messages will be lost."):
            ctx.ui.notify("Clear cancelled", "info")
            return Cancel()
        return None

    @hookimpl
    def pi_commands(self) -> list[SlashCommand]:
        return [
            SlashCommand(name="rpc-input", description="Prompt for text input (demonstrates ctx.ui.input in RPC)",
                         handler=rpc_input),
            SlashCommand(name="rpc-editor", description="Open multi-line editor (demonstrates ctx.ui.editor in RPC)",
                         handler=rpc_editor),
            SlashCommand(name="rpc-prefill",
                         description="Prefill the input editor (demonstrates ctx.ui.setEditorText in RPC)",
                         handler=rpc_prefill),
        ]
