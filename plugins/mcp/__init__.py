"""mcp: tools and resources of Model Context Protocol servers configured in mcp.json, plus ``pi mcp`` and ``/mcp``."""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pi_core import hookimpl

if TYPE_CHECKING:
    import click
    from pi_plugins.mcp.manager import McpManager

    from pi_core import BeforeAgentStart, SlashCommand
    from pi_core.extension import ExtensionContext
    from pi_core.tools import ToolCallInfo


@dataclass(eq=False)
class SessionMcp:
    """What this plugin keeps for one session; it goes away with the session object (a process may hold several
    sessions, e.g. an embedding program's, and each reaches only its own servers)."""

    manager: McpManager | None = None  # the running session's servers
    # a session that started without any mcp.json: its (empty) manager is made when /mcp first asks for it, so a
    # run without MCP servers never imports the manager and its config code
    unconfigured: tuple[ExtensionContext, Path] | None = None
    client_servers: dict[str, dict[str, Any]] | None = None  # a client's (ACP ``session/new``): raw ``mcpServers``


_sessions: weakref.WeakKeyDictionary[Any, SessionMcp] = weakref.WeakKeyDictionary()


def state_of(session: Any) -> SessionMcp:
    """``session``'s MCP state (``ctx.session``), made on first use."""
    state = _sessions.get(session)
    if state is None:
        state = _sessions[session] = SessionMcp()
    return state


def use_client_servers(session: Any, servers: dict[str, dict[str, Any]]) -> None:
    """Connect ``servers`` (``mcpServers`` entries) for ``session`` besides mcp.json's, from its next start on."""
    state_of(session).client_servers = dict(servers)


def manager_of(ctx: ExtensionContext) -> McpManager | None:
    state = state_of(ctx.session)
    if state.manager is None and state.unconfigured is not None:
        from pi_plugins.mcp.config import McpConfig

        (start_ctx, home), state.unconfigured = state.unconfigured, None
        _start(start_ctx, home, McpConfig())  # what the session's start read: no file, no server
    return state.manager


def _start(ctx: ExtensionContext, home: Path, config: Any = None) -> McpManager:
    from pi_plugins.mcp.manager import McpManager

    manager = state_of(ctx.session).manager = McpManager(agent_dir=home, cwd=Path(ctx.cwd))
    manager.start(ctx, config)
    return manager


async def _stop(state: SessionMcp) -> None:
    manager, state.manager, state.unconfigured = state.manager, None, None
    if manager is not None:
        await manager.shutdown()


@hookimpl
async def pi_session_start(ctx: ExtensionContext, reason: str) -> None:
    from pi_core.config_paths import agent_dir

    state = state_of(ctx.session)
    await _stop(state)  # a session replaced without a shutdown first
    home = agent_dir()
    client = state.client_servers
    if not client and not (home / "mcp.json").exists() and not (Path(ctx.cwd) / ".pi" / "mcp.json").exists():
        state.unconfigured = (ctx, home)
        return
    config = None
    if client:
        from pi_plugins.mcp.config import add_client_servers, load_config

        config = load_config(home, Path(ctx.cwd))
        add_client_servers(config, client)
    _start(ctx, home, config)


@hookimpl
async def pi_session_shutdown(ctx: ExtensionContext, reason: str) -> None:
    await _stop(state_of(ctx.session))


@hookimpl
async def pi_before_agent_start(ctx: ExtensionContext, prompt: str, system_prompt: str) -> BeforeAgentStart | None:
    """The first prompt waits for servers with direct tools and for servers whose tools this branch loaded;
    the ``mcp_servers`` list is added to the conversation when it changed."""
    manager = state_of(ctx.session).manager  # none without an mcp.json: nothing to wait for, nothing to list
    if manager is None:
        return None
    from pi_plugins.mcp.manager import SECTION_TYPE, startup_wait
    from pi_plugins.tool_search import loaded_tools

    from pi_core import BeforeAgentStart

    first = not manager.waited_for_startup
    await manager.wait_for_direct()
    if first:
        loaded = loaded_tools(ctx.get_messages())
        if loaded:
            await manager.wait(manager.servers_of(loaded), startup_wait())
    section = manager.servers_section()
    if section is None:
        return None
    text = f"<mcp_servers>\n{section}\n</mcp_servers>"
    last = next((m for m in reversed(ctx.get_messages()) if getattr(m, "customType", None) == SECTION_TYPE), None)
    if last is not None and getattr(last, "content", None) == text:
        return None
    return BeforeAgentStart(message={"customType": SECTION_TYPE, "content": text, "display": False})


@hookimpl
def pi_after_provider_response(ctx: ExtensionContext) -> None:
    """The first answer is arriving, so its request went out: start the servers that could wait until now.

    (Once per response, not per streamed event: a ``pi_agent_event`` here cost every delta a hook call.)"""
    manager = state_of(ctx.session).manager
    if manager is not None and manager.starting_later:
        manager.start_later()


@hookimpl
async def pi_before_tool_call(ctx: ExtensionContext, call: ToolCallInfo) -> None:
    """A tool that reaches other tools (tool_search) or the resource tools wait for every server of the session
    to connect."""
    from pi_core.app.tool_selection import MCP_RESOURCE_TOOLS

    tool = call.tool
    manager = state_of(ctx.session).manager
    if manager is None or tool is None or not (tool.reaches_tools or tool.name in MCP_RESOURCE_TOOLS):
        return
    await manager.wait([s for s in manager.servers if s.enabled])


@hookimpl
def pi_cli_commands() -> list[click.Command]:
    from pi_plugins.mcp.commands import mcp_command

    return [mcp_command]


@hookimpl
def pi_commands() -> list[SlashCommand]:
    from pi_core import SlashCommand

    return [SlashCommand(name="mcp", description="Manage MCP servers: status, tools, reconnect, enable or disable, "
                                                 "sign in or out", handler=_slash)]


async def _slash(args: str, ctx: ExtensionContext) -> None:
    from pi_plugins.mcp.slash import run_slash_command

    await run_slash_command(args, ctx, manager_of(ctx))
