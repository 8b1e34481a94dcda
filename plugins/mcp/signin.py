"""Signing in to an MCP server from a session (``/mcp login``, the manager's Sign in) and how /mcp speaks to the
user: a notice in a UI, else a line on stdout (stderr for warnings and errors)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pi_plugins.mcp.manager import McpManager, Server

    from pi_core.extension import ExtensionContext


def say(ctx: ExtensionContext, text: str, level: str = "info") -> None:
    if ctx.has_ui:
        ctx.ui.notify(text, level)  # type: ignore[arg-type]
    else:
        stream = sys.stdout if level == "info" else sys.stderr
        stream.write(text + "\n")
        stream.flush()


async def login(ctx: ExtensionContext, manager: McpManager, server: Server) -> None:
    from pi_plugins.mcp.oauth import SignInCancelled, SignInError, sign_in

    if not server.entry.config.uses_oauth:
        say(ctx, "No enabled MCP server uses OAuth. Only HTTP servers without an Authorization header do.", "error")
        return
    if not ctx.has_ui:
        say(ctx, f'Signing in to MCP server "{server.name}" requires interactive mode (or run pi mcp login '
                 f'{server.name}).', "error")
        return

    def show(url: str) -> None:
        say(ctx, f'Sign in to MCP server "{server.name}" in your browser:\n{url}')

    try:
        await sign_in(server.entry, manager.agent_dir, show=show)
    except SignInCancelled:
        say(ctx, "Sign-in cancelled.")
        return
    except SignInError as err:
        say(ctx, f"Sign-in failed: {err}", "error")
        return
    try:
        await manager.reconnect(server)
    except Exception as err:  # noqa: BLE001 - the reason is shown
        say(ctx, f"Signed in, but {err}", "error")
        return
    manager.ensure_discovery_active()
    count = len(server.connection.tools) if server.connection else 0
    say(ctx, f'Signed in to MCP server "{server.name}" ({count} tools).')
