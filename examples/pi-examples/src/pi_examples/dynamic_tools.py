"""dynamic_tools: tools registered after start-up, one at session start and more with ``/add-echo-tool NAME``."""

from __future__ import annotations

import re
from typing import Any

from pi_core import SlashCommand, Tool, ToolContext, ToolResult, hookimpl
from pi_core.extension import CommandContext, ExtensionContext
from pi_core.types import TextContent

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {"message": {"type": "string", "description": "Message to echo"}},
    "required": ["message"],
}
TOOL_NAME = re.compile(r"[a-z0-9_]+")
USAGE = "Usage: /add-echo-tool <tool_name> (lowercase, numbers, underscores)"


def echo_tool(name: str, label: str, prefix: str) -> Tool:
    def execute(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return ToolResult(content=[TextContent(text=f"{prefix}{args['message']}")],
                          details={"tool": name, "prefix": prefix})

    return Tool(name=name, label=label, description=f"Echo a message with prefix: {prefix}",
                parameters=PARAMETERS, execute=execute,
                prompt_snippet=f"Echo back user-provided text with {prefix.strip()} prefix",
                prompt_guidelines=["Use echo_session when the user asks for exact echo output."])


def normalize_tool_name(text: str) -> str | None:
    name = text.strip().lower()
    return name if TOOL_NAME.fullmatch(name) else None


class DynamicTools:
    """A class plugin: the tools added are this session's; a replaced session starts with only its own echo
    tool, like a freshly loaded extension (one instance per session)."""

    def __init__(self) -> None:
        self.tools: dict[str, Tool] = {}

    async def register(self, ctx: ExtensionContext, name: str, label: str, prefix: str) -> bool:
        """Add the tool and have pi collect it; False when one of that name is already registered."""
        if name in self.tools:
            return False
        self.tools[name] = echo_tool(name, label, prefix)
        await ctx.refresh_tools()
        return True

    async def add_echo_tool(self, args: str, ctx: CommandContext) -> None:
        name = normalize_tool_name(args)
        if name is None:
            ctx.ui.notify(USAGE, "warning")
            return
        if not await self.register(ctx, name, f"Echo {name}", f"[{name}] "):
            ctx.ui.notify(f"Tool already registered: {name}", "warning")
            return
        ctx.ui.notify(f"Registered dynamic tool: {name}", "info")

    @hookimpl
    def pi_tools(self) -> list[Tool]:
        return list(self.tools.values())

    @hookimpl
    async def pi_session_start(self, ctx: ExtensionContext) -> None:
        await self.register(ctx, "echo_session", "Echo Session", "[session] ")
        ctx.ui.notify("Registered dynamic tool: echo_session", "info")

    @hookimpl
    def pi_commands(self) -> list[SlashCommand]:
        return [SlashCommand(name="add-echo-tool",
                             description="Register a new echo tool dynamically: /add-echo-tool <tool_name>",
                             handler=self.add_echo_tool)]
