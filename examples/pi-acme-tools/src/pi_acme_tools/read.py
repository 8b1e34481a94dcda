"""read, ACME edition: pi's built-in read behind a path deny-list, with every access logged.

The entry point is named ``read``, so pi loads this plugin instead of the built-in one; the built-in
implementation is reused, not copied.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any

from pi_builtin_tools import read as builtin_read

from pi_acme_tools.policy import denied_path, log_access
from pi_core import Tool, ToolContext, ToolError, ToolResult, hookimpl
from pi_core.toolkit.paths import resolve_read_path


def execute(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    absolute = resolve_read_path(args["path"], str(ctx.cwd), os.path.exists)
    pattern = denied_path(absolute)
    if pattern is not None:
        log_access(ctx.cwd, "read", absolute, "denied")
        raise ToolError(f"ACME policy: reading {args['path']} is not allowed (matches {pattern!r}). "
                        "Ask the user to share what you need from it.")
    log_access(ctx.cwd, "read", absolute, "allowed")
    return builtin_read.TOOL.execute(args, ctx)


TOOL: Tool = dataclasses.replace(
    builtin_read.TOOL, execute=execute,
    description=builtin_read.TOOL.description + " ACME policy: reads are logged and secret files are refused.",
)


@hookimpl
def pi_tools() -> list[Tool]:
    return [TOOL]
