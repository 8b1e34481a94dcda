"""hello: the smallest custom tool. The model calls ``hello`` with a name and gets a greeting back."""

from __future__ import annotations

from typing import Any

from pi_core import Tool, ToolContext, ToolResult, hookimpl
from pi_core.types import TextContent

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {"name": {"type": "string", "description": "Name to greet"}},
    "required": ["name"],
}


def greet(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    return ToolResult(content=[TextContent(text=f"Hello, {args['name']}!")], details={"greeted": args["name"]})


@hookimpl
def pi_tools() -> list[Tool]:
    return [Tool(name="hello", label="Hello", description="A simple greeting tool", parameters=PARAMETERS,
                 execute=greet)]
