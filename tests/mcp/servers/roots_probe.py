"""An MCP server (on the SDK's server API) that reports what the client says about its roots, for pi's roots tests.

Run as ``python roots_probe.py EVENTS``: every event goes to the file EVENTS as one JSON line, so a test reads
what the server saw without asking pi. At ``initialize`` it records the client's ``roots`` capability; on
``notifications/roots/list_changed`` it asks ``roots/list`` again and records the answer. The ``roots`` tool
asks ``roots/list`` and returns the URIs; ``mixed`` returns text, an image and text, in that order. It speaks
the handshake-era protocol only (see below).
"""

from __future__ import annotations

import base64
import json
import sys
import warnings
from typing import Any

import anyio
import mcp_types as types
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.utilities.types import Image
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage

warnings.simplefilter("ignore")  # roots are deprecated from protocol 2026-07-28 on; clients still send them
EVENTS = sys.argv[1]
PNG_1X1 = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")

server = MCPServer("roots-probe")


def record(**event: Any) -> None:
    with open(EVENTS, "a") as handle:
        handle.write(json.dumps(event) + "\n")


async def ask_roots(session: Any) -> list[dict[str, Any]]:
    result = await session.list_roots()
    return [root.model_dump(mode="json", by_alias=True, exclude_none=True) for root in result.roots]


@server.tool(description="List the client's roots.")
async def roots(ctx: Context) -> str:
    capabilities = ctx.client_capabilities
    record(event="capabilities", roots=capabilities.roots.model_dump(mode="json", by_alias=True, exclude_none=True)
           if capabilities is not None and capabilities.roots is not None else None)
    listed = await ask_roots(ctx.session)
    record(event="roots", roots=listed)
    return json.dumps(listed)


@server.tool(description="Return text, an image, then text.", structured_output=False)
def mixed() -> list[Any]:
    return ["before the image", Image(data=PNG_1X1, format="png"), "after the image"]


async def on_roots_changed(ctx: Any, _params: types.NotificationParams) -> None:
    record(event="list_changed")
    record(event="roots", roots=await ask_roots(ctx.session))


lowlevel = server._lowlevel_server
lowlevel.add_notification_handler("notifications/roots/list_changed", types.NotificationParams, on_roots_changed)


async def serve_handshake_era() -> None:
    """Serve the handshake-era protocol only, as the servers that use roots do (2026-07-28 dropped roots,
    SEP-2577): ``server/discover`` is refused before the SDK sees it, so the client falls back to initialize."""
    async with stdio_server() as (read_stream, write_stream):
        relay_send, relay_receive = anyio.create_memory_object_stream[Any](16)

        async def relay() -> None:
            async with relay_send:
                async for item in read_stream:
                    message = getattr(item, "message", None)
                    if isinstance(message, types.JSONRPCRequest) and message.method == "server/discover":
                        error = types.JSONRPCError(jsonrpc="2.0", id=message.id, error=types.ErrorData(
                            code=types.METHOD_NOT_FOUND, message="Method not found"))
                        await write_stream.send(SessionMessage(error))
                        continue
                    await relay_send.send(item)

        async with anyio.create_task_group() as group:
            group.start_soon(relay)
            await lowlevel.run(relay_receive, write_stream, lowlevel.create_initialization_options())
            group.cancel_scope.cancel()


if __name__ == "__main__":
    anyio.run(serve_handshake_era)
