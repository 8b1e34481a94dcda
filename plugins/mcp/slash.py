"""``/mcp`` in every mode: server status, a server's tools, reconnect, enable/disable (saved to the file that
defines the server; ``--project`` adds a project override), and sign in or out."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pi_plugins.mcp.config import CLIENT_SOURCE, ConfigError
from pi_plugins.mcp.manager import (
    Server,
    attention_rank,
    describe_state,
    source_of,
    startup_wait,
)
from pi_plugins.mcp.signin import login, say

if TYPE_CHECKING:
    from pi_plugins.mcp.manager import McpManager

    from pi_core.extension import ExtensionContext

USAGE = ("Usage: /mcp, /mcp tools <server>, /mcp reconnect <server>, /mcp enable <server> [--project], "
         "/mcp disable <server> [--project], /mcp login <server>, /mcp logout <server>")


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


async def run_slash_command(args: str, ctx: ExtensionContext, manager: McpManager | None) -> None:
    """``/mcp args`` for the session's ``manager`` (None: MCP is not running in it)."""
    if manager is None:
        say(ctx, "MCP is not running in this session.", "warning")
        return
    words = args.split()
    if not words and ctx.mode == "interactive":
        from pi_plugins.mcp.panel import show_manager

        await show_manager(ctx, manager)  # at once: the list shows servers still connecting as such
        return
    if not words:
        await manager.wait([s for s in manager.servers if s.enabled], startup_wait())
        say(ctx, status(manager))
        return
    action, rest = words[0], words[1:]
    flags = {w for w in rest if w.startswith("--")}
    names = [w for w in rest if not w.startswith("--")]
    if action not in ("tools", "reconnect", "enable", "disable", "login", "logout") or len(names) != 1 \
            or flags - {"--project"}:
        say(ctx, USAGE, "warning")
        return
    server = manager.find(names[0])
    if server is None:
        say(ctx, f'No MCP server named "{names[0]}".', "error")
        return
    if action == "tools":
        await manager.wait([server], startup_wait())
        say(ctx, tools_text(server))
    elif action == "reconnect":
        try:
            await manager.reconnect(server)
        except Exception as err:  # noqa: BLE001 - the reason is shown, the session goes on
            say(ctx, str(err), "error")
            return
        say(ctx, f'Reconnected to MCP server "{server.name}" ({describe_state(server)}).')
    elif action in ("enable", "disable"):
        await _set_enabled(ctx, manager, server, action == "enable", "--project" in flags)
    elif action == "login":
        await login(ctx, manager, server)
    else:
        from pi_plugins.mcp.oauth import sign_out

        if not server.entry.config.uses_oauth:
            say(ctx, "No enabled MCP server uses OAuth. Only HTTP servers without an Authorization header do.",
                "error")
            return
        removed = sign_out(server.entry, manager.agent_dir)
        if server.connection is not None:
            await server.connection.signed_out()
        say(ctx, f'Signed out of MCP server "{server.name}".' if removed
            else f'No stored credentials for MCP server "{server.name}".')


async def _set_enabled(ctx: ExtensionContext, manager: McpManager, server: Server, enabled: bool,
                       in_project: bool) -> None:
    if in_project and manager.config.project_path is None:
        say(ctx, "There is no trusted project to save the change in.", "error")
        return
    if server.enabled == enabled and not in_project:
        say(ctx, f'MCP server "{server.name}" is already {"enabled" if enabled else "disabled"}.')
        return
    try:
        await manager.set_enabled(server, enabled, in_project=in_project)
    except (ConfigError, OSError) as err:
        say(ctx, f"Could not update {server.entry.edit_path}: {err}", "error")
        return
    where = "for this session" if server.entry.source == CLIENT_SOURCE else f"saved to {server.entry.edit_path}"
    say(ctx, f'{"Enabled" if enabled else "Disabled"} MCP server "{server.name}" ({where}): '
              f"{describe_state(server)}.")
