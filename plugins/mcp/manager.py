"""The MCP servers of one session: connected in the background, their tools added and withdrawn as they change.

The first prompt waits (up to 10 s) only for servers with ``direct`` tools; ``tool_search`` and the resource tools
wait for every server; other servers are simply used once connected. Everything runs on the session's event loop.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pi_plugins.mcp.config import (
    CLIENT_SOURCE,
    Exposure,
    McpConfig,
    ServerEntry,
    load_config,
    namespace,
    update_server,
)
from pi_plugins.mcp.naming import assign_names, server_summary

if TYPE_CHECKING:
    from pi_plugins.mcp.connection import ServerConnection

    from pi_core.extension import ExtensionContext

STARTUP_WAIT_S = 10.0
LATER_START_S = 2.0  # servers without direct tools start at the first answer, or this long after the session
STARTUP_WAIT_ENV = "PI_MCP_STARTUP_WAIT"  # seconds; tests on a loaded machine give slow servers longer
TOOL_SEARCH = "tool_search"
SECTION_TYPE = "mcp_servers"
MAX_SECTION_CHARS = 4096
MAX_SUMMARY_CHARS = 250
STATE_RANK = {"needs-auth": 0, "failed": 1, "disconnected": 2, "connecting": 3, "connected": 4}


@dataclass
class Server:
    entry: ServerEntry
    connection: ServerConnection | None = None
    ready: asyncio.Task[None] | None = None
    message: str | None = None

    @property
    def name(self) -> str:
        return self.entry.name

    @property
    def enabled(self) -> bool:
        return self.entry.config.enabled


@dataclass
class McpManager:
    agent_dir: Path
    cwd: Path
    ctx: ExtensionContext | None = None
    config: McpConfig = field(default_factory=McpConfig)
    servers: list[Server] = field(default_factory=list)
    extra_roots: list[Path] = field(default_factory=list)
    watchers: set[Callable[[], None]] = field(default_factory=set)
    owners: dict[str, str] = field(default_factory=dict)  # pi tool name -> "server\0tool"
    server_tools: dict[str, set[str]] = field(default_factory=dict)
    resource_exposure: str | None = None
    waited_for_startup: bool = False
    warned_unreachable: bool = False
    last_section: str | None = None
    closed: bool = False
    _log: Any = None
    _reported: bool = False
    _later: list[Server] = field(default_factory=list)
    _later_timer: asyncio.TimerHandle | None = None

    # --- lifecycle --------------------------------------------------------------------------------

    def start(self, ctx: ExtensionContext, config: McpConfig | None = None) -> None:
        self.ctx = ctx
        self.config = config if config is not None else load_config(self.agent_dir, self.cwd)
        self.servers = [Server(entry) for entry in self.config.servers]
        if self.config.errors:
            self._notify("MCP configuration problems:\n" + "\n".join(f"  {e}" for e in self.config.errors),
                         "warning")
        self.ensure_discovery_active()
        enabled = [s for s in self.servers if s.enabled]
        loop = asyncio.get_running_loop()
        for server in enabled:
            if "direct" in server.entry.config.exposures():
                server.ready = loop.create_task(self._connect(server))
            else:
                self._later.append(server)
        if self._later:  # nothing needs them before the model answers: the first request goes out first
            self._later_timer = loop.call_later(LATER_START_S, self.start_later)
        if enabled:
            loop.create_task(self._report_when_settled())

    @property
    def starting_later(self) -> bool:
        return bool(self._later)

    def start_later(self) -> None:
        """Start the servers without direct tools (on the first answer, a wait for them, or after a moment)."""
        later, self._later = self._later, []
        if self._later_timer is not None:
            self._later_timer.cancel()
            self._later_timer = None
        for server in later:
            if not self.closed and server.ready is None:
                server.ready = asyncio.get_running_loop().create_task(self._connect(server))

    async def _connect(self, server: Server) -> None:
        # The SDK takes a while to import: in a thread, so the first model request does not wait for it.
        await asyncio.to_thread(load_runtime)
        if self.closed or not server.enabled:
            return
        connection = self._connection(server.entry)
        server.connection = connection
        self.changed()
        await connection.try_connect()

    def _connection(self, entry: ServerEntry) -> ServerConnection:
        from pi_plugins.mcp.connection import ServerConnection
        from pi_plugins.mcp.log import ServerLog
        from pi_plugins.mcp.oauth import session_auth

        if self._log is None:
            self._log = ServerLog(self.agent_dir / "mcp.log")
        return ServerConnection(entry=entry, cwd=self.cwd, log=self._log, on_tools=self._on_tools,
                                on_change=lambda _c: self.changed(), auth=session_auth(self.agent_dir),
                                roots=self.roots)

    def changed(self) -> None:
        """A server's state changed: tell the watchers (the /mcp panel redraws)."""
        for watcher in list(self.watchers):
            watcher()

    # --- roots ------------------------------------------------------------------------------------

    def roots(self) -> list[Path]:
        """What servers may work on (``roots/list``): the project directory, then any extra roots."""
        return list(dict.fromkeys([self.cwd.resolve(), *(p.resolve() for p in self.extra_roots)]))

    async def set_roots(self, cwd: Path | None = None, extra: Iterable[Path] | None = None) -> None:
        """A new project directory and/or extra roots: connected servers are told (``roots/list_changed``)
        and ask again. Servers started later use the new directory as their working directory too."""
        before = self.roots()
        if cwd is not None:
            self.cwd = Path(cwd)
        if extra is not None:
            self.extra_roots = [Path(p) for p in extra]
        if self.roots() == before:
            return
        connections = [s.connection for s in self.servers if s.connection is not None]
        for connection in connections:
            connection.cwd = self.cwd
        await asyncio.gather(*(c.roots_changed() for c in connections))

    async def _report_when_settled(self) -> None:
        while self._later and not self.closed:
            await asyncio.sleep(0.1)
        await self.wait([s for s in self.servers if s.enabled])
        if self.closed or self._reported:
            return
        self._reported = True
        lines = [f"{s.name}: {describe_state(s)}" for s in self.servers
                 if s.connection is not None and s.connection.state in ("failed", "needs-auth")]
        if lines:
            self._notify("MCP servers need attention:\n" + "\n".join(f"  {line}" for line in lines)
                         + "\nRun /mcp to fix.", "warning")

    async def shutdown(self) -> None:
        self.closed = True
        self._later = []
        if self._later_timer is not None:
            self._later_timer.cancel()
        connections = [s.connection for s in self.servers if s.connection is not None]
        for server in self.servers:
            if server.ready is not None and not server.ready.done():
                server.ready.cancel()
        await asyncio.gather(*(c.close() for c in connections), return_exceptions=True)
        if self.ctx is not None:
            self.ctx.remove_tools([n for names in self.server_tools.values() for n in names])
            self.ctx.remove_tools(self._resource_tool_names())
        self.server_tools.clear()

    # --- waiting ----------------------------------------------------------------------------------

    async def wait(self, servers: Iterable[Server], timeout: float | None = None) -> bool:
        """Wait for the servers' current connection attempts; False when ``timeout`` ran out first."""
        servers = list(servers)
        if any(s in self._later for s in servers):
            self.start_later()
        tasks = [s.ready for s in servers if s.enabled and s.ready is not None and not s.ready.done()]
        openings = [s.connection.pending for s in servers if s.connection is not None and s.connection.pending]
        pending: list[asyncio.Future[Any]] = [*tasks, *openings]
        if not pending:
            return True
        _done, not_done = await asyncio.wait(pending, timeout=timeout)
        return not not_done

    async def wait_for_direct(self) -> None:
        """Once per session: the first prompt's request must declare the direct tools, so wait for them."""
        if self.waited_for_startup:
            return
        self.waited_for_startup = True
        direct = [s for s in self.servers if s.enabled and "direct" in s.entry.config.exposures()]
        if not direct:
            return
        if not await self.wait(direct, startup_wait()):
            self._notify("MCP servers are still connecting; their tools become available once connected.", "info")

    def servers_of(self, tool_names: Iterable[str]) -> list[Server]:
        prefixes = {namespace(s.name) + "__": s for s in self.servers}
        found: dict[str, Server] = {}
        for tool in tool_names:
            for prefix, server in prefixes.items():
                if tool.startswith(prefix) or self.owners.get(tool, "").split("\0", 1)[0] == server.name:
                    found[server.name] = server
        return list(found.values())

    # --- tools ------------------------------------------------------------------------------------

    def find(self, name: str) -> Server | None:
        return next((s for s in self.servers if s.name == name), None)

    def _on_tools(self, connection: ServerConnection) -> None:
        from pi_plugins.mcp.tools import make_tool

        server = self.find(connection.name)
        if server is None or self.closed or self.ctx is None or server.connection is not connection:
            return
        config = server.entry.config
        names = assign_names(server.name, [t.name for t in connection.tools], self.owners)

        def current_connection() -> ServerConnection | None:  # the server may have reconnected meanwhile
            return server.connection if server.enabled else None

        def readable_resources() -> bool:
            return bool(server.connection and server.connection.has_resources)

        tools = []
        for mcp_tool in connection.tools:
            exposure = config.exposure_of(mcp_tool.name)
            if exposure == "hidden":
                continue
            tools.append(make_tool(server=server.name, name=names[mcp_tool.name], tool=mcp_tool, exposure=exposure,
                                   connection=current_connection, readable_resources=readable_resources))
        current = set(self.ctx.add_tools(tools))
        withdrawn = self.server_tools.get(server.name, set()) - current
        self.ctx.remove_tools(sorted(withdrawn))
        self.server_tools[server.name] = current
        self.sync_resource_tools()
        self.ensure_discovery_active()

    def hide_tools(self, server: Server) -> None:
        if self.ctx is not None:
            self.ctx.remove_tools(sorted(self.server_tools.get(server.name, set())))
        self.server_tools[server.name] = set()
        self.sync_resource_tools()

    def resource_servers(self) -> list[Server]:
        return [s for s in self.servers if s.enabled and s.entry.config.exposure != "hidden"
                and s.connection is not None and s.connection.has_resources]

    def _resource_tool_names(self) -> list[str]:
        from pi_core.app.tool_selection import MCP_RESOURCE_TOOLS

        return list(MCP_RESOURCE_TOOLS)

    def sync_resource_tools(self) -> None:
        """The resource tools take the widest exposure of the servers they reach; none without resources."""
        if self.ctx is None:
            return
        exposures = {s.entry.config.exposure for s in self.resource_servers()}
        exposure = next((e for e in ("direct", "codemode", "deferred") if e in exposures), None)
        if exposure == self.resource_exposure:
            return
        self.resource_exposure = exposure
        if exposure is None:
            self.ctx.remove_tools(self._resource_tool_names())
            return
        from pi_plugins.mcp.resources import resource_tools
        from pi_plugins.mcp.tools import to_pi_exposure

        pi_exposure = to_pi_exposure(exposure)  # type: ignore[arg-type]
        if pi_exposure != "direct":
            active = self.ctx.get_active_tools()
            names = set(self._resource_tool_names())
            if names & set(active):
                self.ctx.set_active_tools([n for n in active if n not in names])
        self.ctx.add_tools(resource_tools(self.resource_servers, pi_exposure))

    def ensure_discovery_active(self) -> None:
        """Servers whose tools are not declared are reached through tool_search: turn it on when one is configured."""
        if self.ctx is None:
            return
        exposures = {e for s in self.servers if s.enabled for e in s.entry.config.exposures()}
        if not exposures & {"codemode", "deferred"}:
            return
        active = self.ctx.get_active_tools()
        if TOOL_SEARCH in active:
            return
        available = {t.name for t in self.ctx.get_all_tools()}
        if TOOL_SEARCH in available:
            self.ctx.set_active_tools([*active, TOOL_SEARCH])
            return
        if not self.warned_unreachable:
            self.warned_unreachable = True
            self._notify("MCP tools that are not direct are only reachable through the tool_search tool, but it is "
                         "not available; they cannot be called.", "warning")

    # --- the mcp_servers section ------------------------------------------------------------------

    def servers_section(self) -> str | None:
        """The servers whose tools are not declared, so the model knows to look for them with tool_search."""
        listed = sorted((s for s in self.servers if s.enabled
                         and s.entry.config.exposures() & {"codemode", "deferred"}), key=lambda s: s.name)
        if not listed:
            return None
        intro = "MCP servers whose tools are not declared to you. Load their tools with `tool_search`."
        heads = [f"- {namespace(s.name)} (tool_search)" for s in listed]

        def size(kept: int) -> int:
            omitted = len(listed) - kept
            tail = [f"- … {omitted} more server{'s' if omitted != 1 else ''}; find their tools with tool_search"] \
                if omitted else []
            return len("\n".join([intro, *heads[:kept], *tail]))

        kept = len(listed)
        while kept > 0 and size(kept) > MAX_SECTION_CHARS:
            kept -= 1
        per_server = min(MAX_SUMMARY_CHARS, (MAX_SECTION_CHARS - size(kept)) // kept - 2) if kept else 0
        lines = [intro]
        for server, head in zip(listed[:kept], heads):
            summary = server_summary(server.entry.config.description,
                                     server.connection.instructions if server.connection else None)
            if per_server > 0 and summary:
                if len(summary) > per_server:
                    summary = summary[:per_server - 1].rstrip() + "…"
                lines.append(f"{head}: {summary}")
            else:
                lines.append(head)
        if kept < len(listed):
            omitted = len(listed) - kept
            lines.append(f"- … {omitted} more server{'s' if omitted != 1 else ''}; find their tools with tool_search")
        return "\n".join(lines)

    # --- changes from /mcp ------------------------------------------------------------------------

    async def set_enabled(self, server: Server, enabled: bool, *, in_project: bool = False) -> None:
        """Saved to the file that defines the server (or a project override); an editor's server
        (``use_client_servers``) has no file: the change holds for the session."""
        entry = server.entry
        path = self.config.project_path if in_project and self.config.project_path else entry.edit_path
        if entry.source == CLIENT_SOURCE:
            pass  # nothing to save it in
        elif entry.scope == "global" and path == self.config.project_path and entry.override is None:
            update_server(path, entry.name, enabled=enabled, create_override=True)
            entry.override = path
        else:
            update_server(path, entry.name, enabled=enabled)
        from dataclasses import replace

        server.entry.config = replace(entry.config, enabled=enabled)  # type: ignore[misc]
        if not enabled:
            connection, server.connection = server.connection, None
            self.hide_tools(server)
            if connection is not None:
                await connection.close()
            return
        server.ready = asyncio.get_running_loop().create_task(self._connect(server))
        await server.ready
        self.ensure_discovery_active()

    async def set_exposure(self, server: Server, exposure: Exposure) -> None:
        """Saved like ``set_enabled``; the server's tools are published again with it, and those no longer
        ``direct`` leave the declared set at once (a ``direct`` one is declared from the next request)."""
        from dataclasses import replace

        entry = server.entry
        if entry.source != CLIENT_SOURCE:
            update_server(entry.edit_path, entry.name, exposure=exposure)
        entry.config = replace(entry.config, exposure=exposure)  # type: ignore[misc]
        if server.connection is not None and server.connection.state == "connected":
            self._on_tools(server.connection)
        self.sync_resource_tools()
        if self.ctx is not None:
            mine = self.server_tools.get(server.name, set())
            indirect = {t.name for t in self.ctx.get_all_tools() if getattr(t, "exposure", "direct") != "direct"}
            active = self.ctx.get_active_tools()
            kept = [name for name in active if name not in mine or name not in indirect]
            if kept != active:
                self.ctx.set_active_tools(kept)
        self.ensure_discovery_active()

    async def reconnect(self, server: Server) -> None:
        if server.connection is None:
            raise LookupError(f'MCP server "{server.name}" is disabled.')
        await server.connection.reconnect()

    def _notify(self, text: str, level: str) -> None:
        if self.ctx is not None and self.ctx.has_ui:
            self.ctx.ui.notify(text, level)  # type: ignore[arg-type]
            return
        prefix = "Warning: " if level == "warning" else ""
        sys.stderr.write(f"{prefix}{text}\n")
        sys.stderr.flush()


def startup_wait() -> float:
    try:
        return float(os.environ.get(STARTUP_WAIT_ENV, STARTUP_WAIT_S))
    except ValueError:
        return STARTUP_WAIT_S


def load_runtime() -> None:
    """Import what talks to servers (the MCP SDK)."""
    import pi_plugins.mcp.connection
    import pi_plugins.mcp.oauth  # noqa: F401


def describe_state(server: Server, with_error: bool = True) -> str:
    if not server.enabled:
        return "disabled"
    connection = server.connection
    if connection is None:
        return "starting"
    if connection.state == "needs-auth":
        return "needs sign-in"
    if connection.state == "failed":
        first = (connection.error or "unknown error").split("\n", 1)[0]
        return f"failed: {first}" if with_error else "failed"
    if connection.state == "connected":
        count = len(connection.tools)
        return f"connected · {count} tool{'s' if count != 1 else ''}{' · resources' if connection.has_resources else ''}"
    if connection.state == "connecting":
        return "connecting…"
    return connection.state


def attention_rank(server: Server) -> int:
    """Servers that need the user come first; disabled ones last."""
    if not server.enabled:
        return 5
    return STATE_RANK.get(server.connection.state if server.connection else "connecting", 3)


def source_of(server: Server) -> str:
    return "global, project override" if server.entry.override else server.entry.scope
