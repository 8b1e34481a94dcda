"""An MCP server's tools as pi tools: one ``Tool`` per server tool, calling it through the server's connection."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pi_plugins.mcp.config import Exposure
from pi_plugins.mcp.results import convert_result

from pi_core.errors import ToolError
from pi_core.tools import Tool, ToolContext, ToolResult
from pi_core.types import TextContent

ANNOTATION_HINTS = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")


def input_schema(schema: dict[str, Any] | None) -> dict[str, Any]:
    """Tool parameters must be an object schema; servers may leave out ``type`` or ``properties``."""
    normalized = dict(schema or {})
    normalized.setdefault("type", "object")
    normalized.setdefault("properties", {})
    return normalized


def annotations_of(tool: Any) -> dict[str, bool] | None:
    raw = tool.annotations.model_dump(by_alias=True) if getattr(tool, "annotations", None) else {}
    hints = {hint: raw[hint] for hint in ANNOTATION_HINTS if isinstance(raw.get(hint), bool)}
    return hints or None


def to_pi_exposure(exposure: Exposure) -> str:
    """``codemode`` tools are not declared, like ``deferred`` ones: codemode scripts and tool_search reach them."""
    return "direct" if exposure == "direct" else "deferred"


def make_tool(*, server: str, name: str, tool: Any, exposure: Exposure, connection: Callable[[], Any],
              readable_resources: Callable[[], bool]) -> Tool:
    """``connection()`` returns the server's current connection at call time (it may have been replaced)."""
    title = tool.title or (tool.annotations.title if getattr(tool, "annotations", None) else None)
    description = (tool.description or "").strip() or title or f"MCP tool {tool.name} from server {server}"
    mcp_name = tool.name

    async def execute(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        current = connection()
        if current is None:
            raise ToolError(f'MCP server "{server}" is disabled.')
        if current.state == "connected" and not any(t.name == mcp_name for t in current.tools):
            raise ToolError(f'MCP tool "{server}/{mcp_name}" is no longer available.')

        def progress(value: float, total: float | None, message: str | None) -> None:
            shown = message or f"Progress {value:g}{'' if total is None else f'/{total:g}'}"
            ctx.update(ToolResult(content=[TextContent(text=shown)], details={"server": server, "tool": mcp_name}))

        from pi_plugins.mcp.connection import McpCallError

        try:
            result = await current.request(
                lambda client, on_progress: client.call_tool(mcp_name, args, progress_callback=on_progress),
                signal=ctx.signal, on_progress=progress, what=mcp_name)
        except McpCallError as err:
            raise ToolError(str(err)) from None
        converted, is_error = convert_result(server, mcp_name, result, readable_resources=readable_resources(),
                                             output_dir=ctx.settings.full_output_dir())
        if is_error:
            raise ToolError("\n".join(c.text for c in converted.content if isinstance(c, TextContent)))
        return converted

    return Tool(name=name, label=f"{server}/{mcp_name}", description=description,
                parameters=input_schema(tool.input_schema), execute=execute, coercion="json",
                exposure=to_pi_exposure(exposure), annotations=annotations_of(tool))  # type: ignore[arg-type]
