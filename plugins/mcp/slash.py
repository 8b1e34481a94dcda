"""``/mcp`` in every mode: server status, a server's tools, reconnect, enable/disable (saved to the file that
defines the server; ``--project`` adds a project override), and sign in or out."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from pi_plugins.mcp.manager import (
    Server,
    attention_rank,
    describe_state,
    source_of,
    startup_wait,
)

if TYPE_CHECKING:
    from pi_plugins.mcp.manager import McpManager

    from pi_core.extension import ExtensionContext

USAGE = ("Usage: /mcp, /mcp tools <server>, /mcp reconnect <server>, /mcp enable <server> [--project], "
         "/mcp disable <server> [--project], /mcp login <server>, /mcp logout <server>")


def _say(ctx: ExtensionContext, text: str, level: str = "info") -> None:
    if ctx.has_ui:
        ctx.ui.notify(text, level)  # type: ignore[arg-type]
    else:
        stream = sys.stdout if level == "info" else sys.stderr
        stream.write(text + "\n")
        stream.flush()


def status(manager: McpManager) -> str:
    if not manager.servers and not manager.config.errors:
        return (f"No MCP servers configured. Add them to {manager.agent_dir / 'mcp.json'} or .pi/mcp.json "
                "(check them with pi mcp list).")
    servers = sorted(manager.servers, key=lambda s: (attention_rank(s), s.name))
    lines = []
    for server in servers:
        entry = server.entry
        line = f"{server.name}: {describe_state(server, with_error=False)} · {entry.config.exposure} · " \
               f"{source_of(server)}"
        connection = server.connection
        if connection is not None and connection.state == "needs-auth":
            line += f" (run /mcp login {server.name})"
        if connection is not None and connection.state == "disconnected":
            line += " (reconnects on next call)"
        if connection is not None and connection.error and connection.state != "connected":
            line += "\n    " + connection.error.replace("\n", "\n    ")
        lines.append(line)
    lines += [f"config error: {error}" for error in manager.config.errors]
    return "\n".join(lines)


def tools_text(server: Server) -> str:
    connection = server.connection
    if connection is None or connection.state != "connected":
        return f'MCP server "{server.name}" is not connected ({describe_state(server)}).'
    config = server.entry.config
    lines = [f"Tools of {server.name} (exposure {config.exposure}):"]
    for tool in connection.tools:
        exposure = config.exposure_of(tool.name)
        mark = "" if exposure == config.exposure else f"[{exposure}] "
        lines.append(f"  {tool.name}: {mark}{(tool.description or '').strip().splitlines()[0] if tool.description else ''}")
    if len(lines) == 1:
        lines.append("  The server offers no tools.")
    return "\n".join(lines)


async def run_slash_command(args: str, ctx: ExtensionContext) -> None:
    from pi_plugins.mcp import manager_of

    manager = manager_of(ctx)
    if manager is None:
        _say(ctx, "MCP is not running in this session.", "warning")
        return
    words = args.split()
    if not words and ctx.mode == "interactive":
        from pi_plugins.mcp.panel import show_manager

        await show_manager(ctx, manager)  # at once: the list shows servers still connecting as such
        return
    if not words:
        await manager.wait([s for s in manager.servers if s.enabled], startup_wait())
        _say(ctx, status(manager))
        return
    action, rest = words[0], words[1:]
    flags = {w for w in rest if w.startswith("--")}
    names = [w for w in rest if not w.startswith("--")]
    if action not in ("tools", "reconnect", "enable", "disable", "login", "logout") or len(names) != 1 \
            or flags - {"--project"}:
        _say(ctx, USAGE, "warning")
        return
    server = manager.find(names[0])
    if server is None:
        _say(ctx, f'No MCP server named "{names[0]}".', "error")
        return
    if action == "tools":
        await manager.wait([server], startup_wait())
        _say(ctx, tools_text(server))
    elif action == "reconnect":
        try:
            await manager.reconnect(server)
        except Exception as err:  # noqa: BLE001 - the reason is shown, the session goes on
            _say(ctx, str(err), "error")
            return
        _say(ctx, f'Reconnected to MCP server "{server.name}" ({describe_state(server)}).')
    elif action in ("enable", "disable"):
        await _set_enabled(ctx, manager, server, action == "enable", "--project" in flags)
    elif action == "login":
        await login(ctx, manager, server)
    else:
        from pi_plugins.mcp.oauth import sign_out

        if not server.entry.config.uses_oauth:
            _say(ctx, "No enabled MCP server uses OAuth. Only HTTP servers without an Authorization header do.",
                 "error")
            return
        removed = sign_out(server.entry, manager.agent_dir)
        if server.connection is not None:
            await server.connection.signed_out()
        _say(ctx, f'Signed out of MCP server "{server.name}".' if removed
             else f'No stored credentials for MCP server "{server.name}".')


async def _set_enabled(ctx: ExtensionContext, manager: McpManager, server: Server, enabled: bool,
                       in_project: bool) -> None:
    from pi_plugins.mcp.config import ConfigError

    if in_project and manager.config.project_path is None:
        _say(ctx, "There is no trusted project to save the change in.", "error")
        return
    if server.enabled == enabled and not in_project:
        _say(ctx, f'MCP server "{server.name}" is already {"enabled" if enabled else "disabled"}.')
        return
    try:
        await manager.set_enabled(server, enabled, in_project=in_project)
    except (ConfigError, OSError) as err:
        _say(ctx, f"Could not update {server.entry.edit_path}: {err}", "error")
        return
    from pi_plugins.mcp import CLIENT_SOURCE

    where = "for this session" if server.entry.source == CLIENT_SOURCE else f"saved to {server.entry.edit_path}"
    _say(ctx, f'{"Enabled" if enabled else "Disabled"} MCP server "{server.name}" ({where}): '
              f"{describe_state(server)}.")


async def login(ctx: ExtensionContext, manager: McpManager, server: Server) -> None:
    from pi_plugins.mcp.oauth import SignInCancelled, SignInError, sign_in

    if not server.entry.config.uses_oauth:
        _say(ctx, "No enabled MCP server uses OAuth. Only HTTP servers without an Authorization header do.", "error")
        return
    if not ctx.has_ui:
        _say(ctx, f'Signing in to MCP server "{server.name}" requires interactive mode (or run pi mcp login '
                  f'{server.name}).', "error")
        return

    def show(url: str) -> None:
        _say(ctx, f'Sign in to MCP server "{server.name}" in your browser:\n{url}')

    try:
        await sign_in(server.entry, manager.agent_dir, show=show)
    except SignInCancelled:
        _say(ctx, "Sign-in cancelled.")
        return
    except SignInError as err:
        _say(ctx, f"Sign-in failed: {err}", "error")
        return
    try:
        await manager.reconnect(server)
    except Exception as err:  # noqa: BLE001 - the reason is shown
        _say(ctx, f"Signed in, but {err}", "error")
        return
    manager.ensure_discovery_active()
    count = len(server.connection.tools) if server.connection else 0
    _say(ctx, f'Signed in to MCP server "{server.name}" ({count} tools).')
