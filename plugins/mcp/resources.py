"""MCP resources through the three tools Codex and OpenCode use: list_mcp_resources, list_mcp_resource_templates
and read_mcp_resource. Listings are JSON; read resources become text and images, other binaries files."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from pi_plugins.mcp.results import block_contents, limit_content

from pi_core.errors import ToolError
from pi_core.tools import Tool, ToolContext, ToolResult
from pi_core.types import TextContent

if TYPE_CHECKING:
    from pi_plugins.mcp.connection import ServerConnection

LIST_RESOURCES, LIST_TEMPLATES, READ_RESOURCE = "list_mcp_resources", "list_mcp_resource_templates", "read_mcp_resource"
_SERVER = {"type": "string", "description": "MCP server name. Omit to list every server with resources."}
_CURSOR = {"type": "string",
           "description": "Opaque cursor from a previous call with the same server; omit for the first page."}
LIST_PARAMETERS = {"type": "object", "properties": {"server": _SERVER, "cursor": _CURSOR},
                   "additionalProperties": False}
READ_PARAMETERS = {
    "type": "object",
    "properties": {
        "server": {"type": "string", "description": "MCP server name exactly as configured. Must match the "
                                                    "'server' field returned by list_mcp_resources."},
        "uri": {"type": "string", "description": "Resource URI to read. Must be one of the URIs returned by "
                                                 "list_mcp_resources."},
    },
    "required": ["server", "uri"],
    "additionalProperties": False,
}
_APP_PROFILE = re.compile(r';\s*profile\s*=\s*"?mcp-app"?', re.IGNORECASE)


def _is_app(item: dict[str, Any]) -> bool:
    """MCP Apps resources are user interfaces for hosts that render them; pi does not."""
    uri = str(item.get("uri") or item.get("uriTemplate") or "")
    return uri.startswith("ui://") or bool(_APP_PROFILE.search(str(item.get("mimeType") or "")))


def _listed(server: str, item: Any) -> dict[str, Any]:
    data = item.model_dump(mode="json", by_alias=True, exclude_none=True)
    data.pop("_meta", None)
    data.pop("icons", None)
    return {"server": server, **data}


def _argument(args: dict[str, Any], key: str) -> str | None:
    value = args.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise ToolError(f"{key} must be a string")
    return value.strip() or None


def _json_result(tool: str, server: str | None, payload: dict[str, Any], ctx: ToolContext) -> ToolResult:
    text = TextContent(text=json.dumps(payload, ensure_ascii=False))
    return limit_content([text], ctx.settings.full_output_dir()).result(server or "", tool)


class Server(Protocol):
    """A connected server with resources, as these tools use it (``pi_plugins.mcp.manager.Server``)."""

    @property
    def name(self) -> str: ...
    @property
    def connection(self) -> ServerConnection | None: ...


def resource_tools(resource_servers: Callable[[], Sequence[Server]], exposure: str) -> list[Tool]:
    """The three tools over the servers ``resource_servers()`` names at each call."""

    def find(name: str) -> Server:
        servers = resource_servers()
        for server in servers:
            if server.name == name:
                return server
        available = ", ".join(s.name for s in servers)
        raise ToolError(f'MCP server "{name}" has no resources'
                        + (f". Servers with resources: {available}" if available else ""))

    async def listing(args: dict[str, Any], ctx: ToolContext, key: str, templates: bool) -> dict[str, Any]:
        from pi_plugins.mcp.connection import McpCallError

        name, cursor = _argument(args, "server"), _argument(args, "cursor")

        async def page(server: Server, after: str | None) -> tuple[list[Any], str | None]:
            assert server.connection is not None

            async def run(client: Any, _progress: Any) -> Any:
                if templates:
                    try:
                        return await client.list_resource_templates(cursor=after)
                    except Exception as err:
                        if getattr(getattr(err, "error", None), "code", None) == -32601:
                            return None
                        raise
                return await client.list_resources(cursor=after)

            result = await server.connection.request(run, signal=ctx.signal, what=key, retry_transient=True)
            if result is None:
                return [], None
            items = result.resource_templates if templates else result.resources
            return [i for i in items if not _is_app(i.model_dump(by_alias=True))], result.next_cursor

        try:
            if name:
                server = find(name)
                items, next_cursor = await page(server, cursor)
                payload: dict[str, Any] = {"server": server.name, key: [_listed(server.name, i) for i in items]}
                if next_cursor:
                    payload["nextCursor"] = next_cursor
                return payload
            if cursor:
                raise ToolError("cursor can only be used when a server is specified")
            everything: list[dict[str, Any]] = []
            errors: list[dict[str, str]] = []
            for server in sorted(resource_servers(), key=lambda s: s.name):
                after: str | None = None
                try:
                    for _page in range(100):
                        items, after = await page(server, after)
                        everything.extend(_listed(server.name, i) for i in items)
                        if not after:
                            break
                except McpCallError as err:
                    errors.append({"server": server.name, "error": str(err)})
            return {key: everything, **({"errors": errors} if errors else {})}
        except McpCallError as err:
            raise ToolError(str(err)) from None

    async def list_resources(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        payload = await listing(args, ctx, "resources", False)
        return _json_result(LIST_RESOURCES, _argument(args, "server"), payload, ctx)

    async def list_templates(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        payload = await listing(args, ctx, "resourceTemplates", True)
        return _json_result(LIST_TEMPLATES, _argument(args, "server"), payload, ctx)

    async def read_resource(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        from pi_plugins.mcp.connection import McpCallError

        name, uri = _argument(args, "server"), _argument(args, "uri")
        if not name:
            raise ToolError("server must be provided")
        if not uri:
            raise ToolError("uri must be provided")
        server = find(name)
        assert server.connection is not None
        try:
            result = await server.connection.request(lambda client, _p: client.read_resource(uri),
                                                     signal=ctx.signal, what=READ_RESOURCE, retry_transient=True)
        except McpCallError as err:
            raise ToolError(str(err)) from None
        contents = [c.model_dump(mode="json", by_alias=True, exclude_none=True) for c in result.contents]
        output_dir = ctx.settings.full_output_dir()
        blocks: list[Any] = []
        for item in contents:
            item.pop("_meta", None)
            if len(contents) > 1:
                blocks.append(TextContent(text=f"{item.get('uri', '')}:"))
            blocks.extend(block_contents(server.name, {"type": "resource", "resource": item}, output_dir=output_dir))
        limited = limit_content(blocks or [TextContent(text=f"Resource {uri} is empty.")], output_dir)
        return limited.result(server.name, READ_RESOURCE)

    read_only = {"readOnlyHint": True}
    common: dict[str, Any] = {"exposure": exposure, "annotations": read_only, "coercion": "json"}
    return [
        Tool(name=LIST_RESOURCES, label=LIST_RESOURCES, parameters=LIST_PARAMETERS, execute=list_resources,
             description="Lists resources provided by MCP servers. Resources allow servers to share data that "
                         "provides context to language models, such as files, database schemas, or "
                         "application-specific information. Prefer resources over web search when possible.",
             **common),
        Tool(name=LIST_TEMPLATES, label=LIST_TEMPLATES, parameters=LIST_PARAMETERS, execute=list_templates,
             description="Lists resource templates provided by MCP servers. Parameterized resource templates allow "
                         "servers to share data that takes parameters and provides context to language models, "
                         "such as files, database schemas, or application-specific information. Prefer resource "
                         "templates over web search when possible.", **common),
        Tool(name=READ_RESOURCE, label=READ_RESOURCE, parameters=READ_PARAMETERS, execute=read_resource,
             description="Read a specific resource from an MCP server given the server name and resource URI.",
             **common),
    ]
