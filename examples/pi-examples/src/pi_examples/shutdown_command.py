"""shutdown_command: ``/quit`` and two tools that end pi cleanly through ``ctx.shutdown()``.

The shutdown waits: the interactive UI quits once the run is idle, RPC after the current response, and print
mode ends when its prompt is answered anyway. In the interactive UI pi's own ``/quit`` wins over this one.
"""

from __future__ import annotations

from typing import Any

from pi_core import SlashCommand, Tool, ToolContext, ToolError, ToolResult, hookimpl
from pi_core.extension import CommandContext
from pi_core.types import TextContent


def quit_command(args: str, ctx: CommandContext) -> None:
    ctx.shutdown()


def _shutdown(ctx: ToolContext) -> None:
    if ctx.pi is None:
        raise ToolError("shutdown needs a running session")
    ctx.pi.shutdown()


def finish_and_exit(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    _shutdown(ctx)
    return ToolResult(content=[TextContent(text="Shutdown requested. Exiting after this response.")], details={})


def deploy_and_exit(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    environment = str(args["environment"])
    ctx.update(ToolResult(content=[TextContent(text=f"Deploying to {environment}...")], details={}))
    ctx.update(ToolResult(content=[TextContent(text="Deployment complete, exiting...")], details={}))
    _shutdown(ctx)
    return ToolResult(content=[TextContent(text="Done! Shutdown requested.")], details={"environment": environment})


FINISH = Tool(name="finish_and_exit", label="Finish and Exit", description="Complete a task and exit pi",
              parameters={"type": "object", "properties": {}}, execute=finish_and_exit)
DEPLOY = Tool(name="deploy_and_exit", label="Deploy and Exit", description="Deploy the application and exit pi",
              parameters={"type": "object", "properties": {"environment": {
                  "type": "string", "description": "Target environment (e.g., production, staging)"}},
                  "required": ["environment"]},
              execute=deploy_and_exit)


@hookimpl
def pi_tools() -> list[Tool]:
    return [FINISH, DEPLOY]


@hookimpl
def pi_commands() -> list[SlashCommand]:
    return [SlashCommand(name="quit", description="Exit pi cleanly", handler=quit_command)]
