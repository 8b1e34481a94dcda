"""bash, ACME edition: pi's built-in bash behind a command deny-list, with every command logged.

The entry point is named ``bash``, so pi loads this plugin instead of the built-in one.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from pi_builtin_tools import bash as builtin_bash

from pi_acme_tools.policy import denied_command, log_access
from pi_core import Tool, ToolContext, ToolError, ToolResult, hookimpl


def execute(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    reason = denied_command(args["command"])
    if reason is not None:
        log_access(ctx.cwd, "bash", args["command"], "denied")
        raise ToolError(f"ACME policy: this command is not allowed ({reason}). Find another way or ask the user.")
    log_access(ctx.cwd, "bash", args["command"], "allowed")
    return builtin_bash.TOOL.execute(args, ctx)


TOOL: Tool = dataclasses.replace(
    builtin_bash.TOOL, execute=execute,
    description=builtin_bash.TOOL.description + " ACME policy: commands are logged; destructive ones are refused.",
)


@hookimpl
def pi_tools() -> list[Tool]:
    return [TOOL]
