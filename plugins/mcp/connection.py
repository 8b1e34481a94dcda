"""One MCP server connection over the official SDK: connect, list tools, call, notice drops, reconnect, stop.

Each connection runs in its own task, which enters the SDK client and keeps it open until ``close()``: the SDK's
transports are anyio context managers that must be left by the task that entered them. Stopping a stdio server
is the SDK's sequence: close its stdin, then SIGTERM, then SIGKILL to its process group (it starts every server
in a new session, so ``npx``/``uvx`` wrappers go too). This module imports the SDK; it is loaded only when a
server is configured.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
import sys
import warnings
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import anyio
import httpx2
import mcp_types as types
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pi_plugins.mcp import procs
from pi_plugins.mcp.config import ServerEntry
from pi_plugins.mcp.errors import (
    McpCallError,
    SignInRequired,
    describe_error,
    is_connection_lost,
    is_transient,
    root_cause,
)
from pi_plugins.mcp.expand import expand_map, expand_value
from pi_plugins.mcp.log import ServerLog
from pi_plugins.mcp.streams import (
    StderrTail,
    stdio_with_errlog,
    watched,
    with_http_client,
)

from pi_core import __version__
from pi_core.signals import AbortSignal
from pi_core.toolkit.sandbox import confine

# The SDK logs failures it also raises (with tracebacks); pi reports them itself, so its records go nowhere.
logging.getLogger("mcp").addHandler(logging.NullHandler())
logging.getLogger("mcp").propagate = False

State = Literal["connecting", "connected", "failed", "disconnected", "needs-auth", "closed"]
CONNECT_RETRY_DELAYS = (0.25, 1.0)  # HTTP servers: transient failures are tried twice more
MAX_SSE_EVENT_BYTES = 64 * 1024 * 1024
MIN_CONNECT_S = 30.0  # starting a server (npx may download it first) is not held to a short per-request timeout


AuthFactory = Callable[["ServerConnection"], httpx2.Auth | None]


@dataclass
class ServerConnection:
    """A configured server and its live client (``None`` while not connected). Reconnects on the next call."""

    entry: ServerEntry
    cwd: Path
    log: ServerLog | None = None
    on_tools: Callable[[ServerConnection], None] = lambda _c: None
    on_change: Callable[[ServerConnection], None] = lambda _c: None
    auth: AuthFactory | None = None
    roots: Callable[[], list[Path]] | None = None  # answers roots/list; None: the roots capability is not declared
    state: State = "connecting"
    error: str | None = None
    tools: list[types.Tool] = field(default_factory=list)
    has_resources: bool = False
    instructions: str | None = None
    stderr_tail: str | None = None
    client: Client | None = None
    _runner: asyncio.Task[None] | None = None
    _opening: asyncio.Future[Client] | None = None
    _stop: asyncio.Event | None = None
    _closed: bool = False
    _refreshing: set[asyncio.Task[None]] = field(default_factory=set)
    _stderr: StderrTail | None = None

    @property
    def stderr_text(self) -> str:
        """What a stdio server wrote to stderr lately (its last 2000 characters), live while it runs."""
        if self._stderr is not None:
            return self._stderr.tail()
        return self.stderr_tail or ""

    @property
    def name(self) -> str:
        return self.entry.name

    @property
    def timeout(self) -> float:
        return self.entry.config.timeout

    @property
    def connect_timeout(self) -> float:
        return max(self.timeout, MIN_CONNECT_S)

    # --- connecting -------------------------------------------------------------------------------

    async def connect(self) -> Client:
        """The live client, connecting first when needed (one attempt at a time)."""
        if self._closed:
            raise McpCallError(f'MCP server "{self.name}" is shut down')
        if self.client is not None and self.state == "connected":
            return self.client
        if self._opening is None or self._opening.done():
            self._opening = asyncio.get_running_loop().create_future()
            opening = self._opening
            asyncio.get_running_loop().create_task(self._open(opening))
        return await asyncio.shield(self._opening)

    @property
    def pending(self) -> asyncio.Future[Client] | None:
        """The connection attempt in progress, or None."""
        opening = self._opening
        return opening if opening is not None and not opening.done() else None

    async def try_connect(self) -> bool:
        """Connect if possible; a failure is recorded in ``state`` and ``error`` instead of raised."""
        try:
            await self.connect()
        except McpCallError:
            return False
        return True

    async def _open(self, opening: asyncio.Future[Client]) -> None:
        self._set_state("connecting")
        delays = list(CONNECT_RETRY_DELAYS) if self.entry.config.transport == "http" else []
        while True:
            if self._closed:
                if not opening.done():
                    opening.set_exception(McpCallError(f'MCP server "{self.name}" is shut down'))
                    opening.exception()
                return
            self.stderr_tail = None
            started: asyncio.Future[Client] = asyncio.get_running_loop().create_future()
            self._stop = asyncio.Event()
            self._runner = asyncio.get_running_loop().create_task(self._run(started, self._stop))
            try:
                client = await started
            except BaseException as err:  # noqa: BLE001 - every failure is recorded on the connection
                await self._runner
                if delays and not self._closed and is_transient(err):
                    await asyncio.sleep(delays.pop(0))
                    continue
                self._failed(err)
                if not opening.done():
                    opening.set_exception(McpCallError(self._failure_text()))
                    opening.exception()  # retrieved: nobody may be waiting
                return
            if not opening.done():
                opening.set_result(client)
            return

    def _failure_text(self) -> str:
        if self.state == "needs-auth":
            return f'MCP server "{self.name}" requires sign-in. Run /mcp to sign in.'
        return f'MCP server "{self.name}" failed to connect: {self.error}'

    def _failed(self, err: BaseException) -> None:
        cause = root_cause(err)
        if isinstance(cause, SignInRequired) and not self._closed:
            self.error = None
            self._set_state("needs-auth")
            return
        message = describe_error(cause)
        self.error = f"{message}\n{self.stderr_tail}" if self.stderr_tail else message
        self._set_state("closed" if self._closed else "failed")

    def _transport(self, stderr: StderrTail | None) -> Any:
        config = self.entry.config
        what = f'MCP server "{self.name}"'
        if config.transport == "http":
            headers = expand_map(config.headers, what, "header")
            auth = self.auth(self) if self.auth is not None and config.uses_oauth else None
            client = httpx2.AsyncClient(headers=headers, auth=auth,
                                        timeout=httpx2.Timeout(30.0, read=max(300.0, config.timeout)))
            return with_http_client(client, streamable_http_client(config.url, http_client=client,
                                                                    max_sse_event_size=MAX_SSE_EVENT_BYTES))
        env = {**os.environ, **expand_map(config.env, what, "env")}
        cwd = self.cwd / expand_home(config.cwd) if config.cwd else self.cwd
        argv = [expand_home(config.command), *(expand_home(a) for a in config.args)]
        if config.raw.get("sandbox") is not False:  # inside pi's sandbox, if one is on, unless "sandbox": false
            spawn = confine(argv, env, inline=False)
            argv, env = spawn.argv, spawn.env or env
        params = StdioServerParameters(command=argv[0], args=argv[1:], env=env, cwd=str(cwd))
        errlog = stderr.errlog() if stderr is not None else sys.stderr
        return stdio_with_errlog(params, errlog)

    async def _run(self, started: asyncio.Future[Client], stop: asyncio.Event) -> None:
        stderr = self._stderr = StderrTail() if self.entry.config.transport == "stdio" else None
        dropped = asyncio.Event()
        try:
            before = procs.children()
            # One scope around the whole life of the client: anyio scopes must close in the order they opened.
            with anyio.CancelScope() as deadline:
                deadline.deadline = anyio.current_time() + self.connect_timeout
                async with contextlib.AsyncExitStack() as stack:
                    transport = watched(self._transport(stderr), dropped.set)
                    if stderr is not None:
                        stderr.start()
                    client = Client(transport, cache=None,
                                    client_info=types.Implementation(name="pi", version=__version__),
                                    logging_callback=self._on_log, message_handler=self._on_message,
                                    list_roots_callback=self._list_roots if self.roots is not None else None,
                                    log_level="info")
                    await stack.enter_async_context(client)
                    procs.remember(procs.children() - before)
                    capabilities = client.server_capabilities
                    tools = await _all_tools(client) if capabilities.tools is not None else []
                    deadline.deadline = math.inf
                    await self._serve(client, tools, capabilities, started, stop, dropped)
            if deadline.cancelled_caught:
                raise TimeoutError(f"did not finish connecting within {self.connect_timeout:g} s")
            if dropped.is_set() and not stop.is_set() and not self._closed:
                tail = stderr.tail() if stderr is not None else ""
                self.error = f"Connection closed\n{tail}" if tail else "Connection closed"
                self._set_state("disconnected")
        except BaseException as err:
            if stderr is not None:
                await asyncio.sleep(0.05)  # let the pump read what the dying server wrote
                self.stderr_tail = stderr.tail() or None
            if started.done() and not self._closed and self.state == "connected":
                self.client = None
                self.error = describe_error(err)
                self._set_state("disconnected")
            if not started.done():
                started.set_exception(err if isinstance(err, Exception) else McpCallError(describe_error(err)))
            if isinstance(err, asyncio.CancelledError):
                raise
        finally:
            if stderr is not None:
                stderr.close()

    async def _serve(self, client: Client, tools: list[types.Tool], capabilities: types.ServerCapabilities,
                     started: asyncio.Future[Client], stop: asyncio.Event, dropped: asyncio.Event) -> None:
        """Connected: publish the tools, follow list changes, and wait for ``close()`` or the server to go away."""
        self.client, self.tools = client, tools
        self.has_resources = capabilities.resources is not None
        self.instructions = (client.instructions or "").strip() or None
        self.error = None
        self._set_state("connected")
        self.on_tools(self)
        started.set_result(client)
        async with anyio.create_task_group() as group:
            if capabilities.tools is not None and capabilities.tools.list_changed \
                    and client.protocol_version in MODERN_PROTOCOL_VERSIONS:
                group.start_soon(self._listen, client)
            waiters = [asyncio.ensure_future(stop.wait()), asyncio.ensure_future(dropped.wait())]
            try:
                await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for waiter in waiters:
                    waiter.cancel()
            group.cancel_scope.cancel()
        if self.client is client:
            self.client = None

    async def _listen(self, client: Client) -> None:
        with contextlib.suppress(Exception):
            async with client.listen(tools_list_changed=True) as subscription:
                async for _event in subscription:
                    self._schedule_refresh(client)

    async def _on_message(self, message: Any) -> None:
        root = getattr(message, "root", message)
        if isinstance(root, types.ToolListChangedNotification) and self.client is not None:
            self._schedule_refresh(self.client)

    def _schedule_refresh(self, client: Client) -> None:
        task = asyncio.get_running_loop().create_task(self._refresh(client))
        self._refreshing.add(task)
        task.add_done_callback(self._refreshing.discard)

    async def settled(self) -> None:
        """Wait for tool-list refreshes in flight, so a call that changed the list is followed by the new list."""
        if self._refreshing:
            await asyncio.wait(list(self._refreshing), timeout=self.timeout)

    async def _list_roots(self, context: Any) -> types.ListRootsResult:
        paths = self.roots() if self.roots is not None else []
        return types.ListRootsResult(roots=[types.Root(uri=path.as_uri(), name=path.name or str(path))  # type: ignore[arg-type]
                                            for path in paths])

    async def roots_changed(self) -> None:
        """Tell the connected server its roots changed (``notifications/roots/list_changed``); it asks again."""
        client = self.client
        if client is None or self.state != "connected" or self.roots is None:
            return
        with warnings.catch_warnings(), contextlib.suppress(Exception):
            warnings.simplefilter("ignore")  # the SDK marks roots deprecated from protocol 2026-07-28 on
            await client.send_roots_list_changed()

    async def _on_log(self, params: types.LoggingMessageNotificationParams) -> None:
        if self.log is not None:
            self.log.write(self.name, params.level, params.logger, params.data)

    async def _refresh(self, client: Client) -> None:
        try:
            tools = await _all_tools(client)
        except Exception as err:  # noqa: BLE001 - a failed refresh keeps the old list
            self.error = f"Failed to refresh tools: {describe_error(err)}"
            self.on_change(self)
            return
        if self.client is client and not self._closed:
            self.tools = tools
            self.on_tools(self)
            self.on_change(self)

    def _set_state(self, state: State) -> None:
        self.state = state
        self.on_change(self)

    # --- requests ---------------------------------------------------------------------------------

    async def request(self, run: Callable[[Client, Any], Awaitable[Any]], *, signal: AbortSignal | None = None,
                      on_progress: Callable[[float, float | None, str | None], None] | None = None,
                      what: str = "request", retry_transient: bool = False) -> Any:
        """Run one request with the server's timeout, which each progress notification restarts. ``run`` gets
        the client and a progress callback. A request that finds the connection gone marks it disconnected, so
        the next one reconnects. ``retry_transient`` (reads, never tool calls) tries once more after an HTTP
        408/429/5xx."""
        for attempt in (1, 2):
            client = await self.connect()
            try:
                result = await self._timed(client, run, signal, on_progress, what)
                await self.settled()
                return result
            except McpCallError:
                raise
            except Exception as err:  # noqa: BLE001 - every failure becomes a call error the model reads
                cause = root_cause(err)
                if isinstance(cause, SignInRequired):
                    self._lose(client)
                    self._set_state("needs-auth")
                    raise McpCallError(self._failure_text()) from None
                if is_connection_lost(cause):
                    self._lose(client, describe_error(cause))
                if not (retry_transient and attempt == 1 and is_transient(cause)):
                    raise McpCallError(f'MCP server "{self.name}": {describe_error(cause)}') from None
            await asyncio.sleep(CONNECT_RETRY_DELAYS[0])
        raise AssertionError("unreachable")

    async def _timed(self, client: Client, run: Callable[..., Awaitable[Any]], signal: AbortSignal | None,
                     on_progress: Callable[[float, float | None, str | None], None] | None, what: str) -> Any:
        loop = asyncio.get_running_loop()
        timeout = self.timeout
        aborted = False
        with anyio.CancelScope() as scope:
            scope.deadline = anyio.current_time() + timeout

            async def progress(value: float, total: float | None, message: str | None) -> None:
                scope.deadline = anyio.current_time() + timeout
                if on_progress is not None:
                    on_progress(value, total, message)

            def abort() -> None:
                nonlocal aborted
                aborted = True
                loop.call_soon_threadsafe(scope.cancel)

            remove = signal.add_callback(abort) if signal is not None else (lambda: None)
            try:
                return await run(client, progress)
            finally:
                remove()
        if aborted:
            raise McpCallError("Operation aborted")
        seconds = f"{timeout:g}"
        raise McpCallError(f'MCP server "{self.name}" did not answer {what} within {seconds} s '
                           '(its "timeout" setting; progress notifications restart it)')

    def _lose(self, client: Client, error: str | None = None) -> None:
        if self.client is not client:
            return
        self.client = None
        if self._stop is not None:
            self._stop.set()
        if not self._closed and self.state == "connected":
            self.error = error
            self._set_state("disconnected")

    # --- stopping ---------------------------------------------------------------------------------

    async def reconnect(self) -> None:
        await self._drop()
        await self.connect()

    async def _drop(self, *, abandon: bool = False) -> None:
        """End the current connection. ``abandon`` also stops one still opening (the server is shut down)."""
        if self._opening is not None and not self._opening.done() and not abandon:
            with contextlib.suppress(Exception):
                await asyncio.shield(self._opening)
        self.client = None
        if self._stop is not None:
            self._stop.set()
        runner = self._runner
        if runner is not None and not runner.done() and abandon and self.state != "connected":
            runner.cancel()  # still starting: the SDK's shielded shutdown stops the process
        if runner is not None:
            with contextlib.suppress(BaseException):
                await runner

    async def signed_out(self) -> None:
        """The stored credentials were removed: disconnect; the server needs a sign-in again."""
        await self._drop()
        if not self._closed:
            self._set_state("needs-auth")

    async def close(self) -> None:
        """Stop the server; returns once its transport is closed (and a stdio server has exited)."""
        self._closed = True
        await self._drop(abandon=True)
        self.state = "closed"
        self.on_change(self)


async def _all_tools(client: Client) -> list[types.Tool]:
    tools: list[types.Tool] = []
    cursor: str | None = None
    for _page in range(100):
        result = await client.list_tools(cursor=cursor)
        tools.extend(result.tools)
        cursor = result.next_cursor
        if not cursor:
            break
    return tools


def expand_home(value: str) -> str:
    """``~`` and ``~/...`` name the home directory, as in a shell."""
    if value == "~" or value.startswith("~/"):
        return str(Path.home()) + value[1:]
    return value


__all__ = ["McpCallError", "ServerConnection", "SignInRequired", "describe_error", "expand_value", "root_cause"]
