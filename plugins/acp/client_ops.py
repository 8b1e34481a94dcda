"""The built-in file tools and bash on the client's side: files through ``fs/*`` (the editor's unsaved buffers
included), commands in the client's ``terminal/*``.

Only pi's own ``read``, ``edit``, ``write`` and ``bash`` are swapped, for copies built from their public factories
with these operations, so the tools' texts and checks stay as they are; a tool a plugin put in their place
(a company ``read``) keeps its name and wins over both. Operations run in the tools' worker threads and wait
for the client's answers on the event loop.

The sandbox (issue 35): while a confining sandbox mode is on, every path is checked against its policy before
the client sees it, and bash runs in pi, inside the sandbox, instead of in the client's terminal.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import errno
import io
import os
import time
from collections.abc import Callable, Coroutine
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, BinaryIO, Literal, Protocol, TypeVar

from pi_core.errors import ToolError
from pi_core.toolkit.fileops import (
    LOCAL,
    EditOperations,
    LocalEditOperations,
    ReadOperations,
    WriteOperations,
)

if TYPE_CHECKING:
    from acp.interfaces import Client

    from pi_core.session import AgentSession
    from pi_core.toolkit.procs import ExecOptions
    from pi_core.tools import Tool, ToolContext, ToolResult

T = TypeVar("T")

CLIENT_READ_LIMIT = 4 * 1024 * 1024  # a bigger file is no editor buffer worth the round trip: read from disk
POLL_SECONDS = 0.1
TERMINAL_OUTPUT_LIMIT = 4 * 1024 * 1024
SWAPPED = ("read", "edit", "write", "bash")

_call_id: ContextVar[str] = ContextVar("pi_acp_terminal_call", default="")


class Confinement(Protocol):
    """The part of ``pi_core.toolkit.sandbox.Sandbox`` (issue 35) this plugin uses."""

    def check_path(self, path: str, access: Literal["read", "write"]) -> None:
        """Raise ``SandboxDenied`` (a ``ToolError``) when the policy forbids a file tool ``access`` to ``path``."""


def confinement() -> Confinement | None:
    """The sandbox the model's commands run in while a confining sandbox mode is on, else None. The toolkit's
    slot is asked on every call: it is set at start-up, and a pi without the sandbox module has none."""
    try:
        from pi_core.toolkit import sandbox  # type: ignore[attr-defined,unused-ignore]
    except ImportError:
        return None
    return sandbox.active()  # type: ignore[no-any-return,unused-ignore]


class ClientSide:
    """One session's view of the client: what it offered, and calls to it from worker threads."""

    def __init__(self, client: Client, session_id: str, loop: asyncio.AbstractEventLoop, *,
                 read: bool, write: bool, terminal: bool) -> None:
        self.client, self.session_id, self.loop = client, session_id, loop
        self.can_read, self.can_write, self.can_terminal = read, write, terminal
        self.on_terminal: Callable[[str, str], Coroutine[Any, Any, None]] = _ignore_terminal
        self.written: dict[str, str] = {}  # what we last wrote through the client, per path (for diffs)

    def call(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run a client request from a worker thread; the client's error becomes an OSError the tools word."""
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            return future.result()
        except (ConnectionError, OSError):
            raise
        except Exception as err:
            raise OSError(errno.EIO, f"the editor refused: {err}") from err

    def check(self, path: str, *, write: bool) -> None:
        """The sandbox's word on ``path`` before the client sees it (the client is no sandbox)."""
        policy = confinement()
        if policy is not None:
            policy.check_path(path, "write" if write else "read")

    def read_text(self, path: str) -> str:
        self.check(path, write=False)
        response = self.call(self.client.read_text_file(session_id=self.session_id, path=path))
        return response.content

    def write_text(self, path: str, text: str) -> None:
        self.check(path, write=True)
        self.call(self.client.write_text_file(session_id=self.session_id, path=path, content=text))
        self.written[path] = text

    async def snapshot(self, path: str) -> str | None:
        """The file's text as the editor has it (for a diff): our last write, the client's buffer, or the disk."""
        if path in self.written:
            return self.written.pop(path)
        if self.can_read and _small_text(path):
            with contextlib.suppress(Exception):  # the diff is a nicety: the disk answers instead
                return (await self.client.read_text_file(session_id=self.session_id, path=path)).content
        return await asyncio.to_thread(_local_text, path)


def _small_text(path: str) -> bool:
    try:
        with open(path, "rb") as handle:
            head = handle.read(8192)
            size = os.fstat(handle.fileno()).st_size
    except OSError:
        return False
    return size <= CLIENT_READ_LIMIT and b"\x00" not in head


def _local_text(path: str) -> str | None:
    if not _small_text(path):
        return None
    try:
        with open(path, "rb") as handle:
            return handle.read().decode("utf-8", "replace")
    except OSError:
        return None


def _encode(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


def _decode(data: bytes) -> str | None:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


class ClientReadOperations(ReadOperations):
    """read: text from the editor; images, binary and very large files from the disk (``fs`` carries text only)."""

    def __init__(self, side: ClientSide) -> None:
        self.side = side

    def access(self, path: str) -> None:
        LOCAL.access(path)

    def read_file(self, path: str) -> bytes:
        return self.open_file(path).read()

    def open_file(self, path: str) -> BinaryIO:
        if not _small_text(path):
            self.side.check(path, write=False)
            return LOCAL.open_file(path)
        return io.BytesIO(_encode(self.side.read_text(path)))


class ClientEditOperations(EditOperations):
    def __init__(self, side: ClientSide) -> None:
        self.side = side

    def access(self, path: str) -> None:
        LocalEditOperations().access(path)

    def read_file(self, path: str) -> bytes:
        if self.side.can_read and _small_text(path):
            return _encode(self.side.read_text(path))
        self.side.check(path, write=False)
        return LOCAL.read_file(path)

    def write_file(self, path: str, content: bytes) -> None:
        text = _decode(content)
        if text is None or not self.side.can_write:
            self.side.check(path, write=True)
            LOCAL.write_file(path, content)
            return
        self.side.write_text(path, text)


class ClientWriteOperations(WriteOperations):
    def __init__(self, side: ClientSide) -> None:
        self.side = side

    def write_file(self, path: str, content: bytes) -> None:
        ClientEditOperations(self.side).write_file(path, content)

    def mkdir(self, path: str) -> None:
        self.side.check(path, write=True)
        LOCAL.mkdir(path)


class ClientTerminalOperations:
    """bash's ``ShellOperations`` on the client's terminal: create, stream its output, wait, release."""

    def __init__(self, side: ClientSide, shell: Callable[[str], list[str]]) -> None:
        self.side = side
        self.shell = shell  # the command line that runs a command in pi's shell (``shellPath``)

    def exec(self, command: str, cwd: str, options: ExecOptions) -> int | None:
        from acp.schema import EnvVariable

        from pi_core.toolkit.procs import ExecAborted, ExecTimedOut

        side, client, sid = self.side, self.side.client, self.side.session_id
        if not os.path.isdir(cwd):
            raise ToolError(f"Working directory does not exist: {cwd}\nCannot execute bash commands.")
        program, *args = self.shell(command)
        env = [EnvVariable(name=k, value=v) for k, v in (options.env or {}).items() if os.environ.get(k) != v]
        created = side.call(client.create_terminal(session_id=sid, command=program, args=args, cwd=cwd,
                                                   env=env or None, output_byte_limit=TERMINAL_OUTPUT_LIMIT))
        terminal = created.terminal_id
        side.call(side.on_terminal(_call_id.get(), terminal))
        deadline = time.monotonic() + options.timeout if options.timeout and options.timeout > 0 else None
        seen = ""
        try:
            exit_task = asyncio.run_coroutine_threadsafe(
                client.wait_for_terminal_exit(session_id=sid, terminal_id=terminal), side.loop)
            while True:
                done = exit_task.done()
                seen = self._forward(terminal, seen, options)
                if done:
                    status = exit_task.result()
                    return None if status.signal else status.exit_code
                if options.signal is not None and options.signal.aborted:
                    side.call(client.kill_terminal(session_id=sid, terminal_id=terminal))
                    raise ExecAborted()
                if deadline is not None and time.monotonic() > deadline:
                    side.call(client.kill_terminal(session_id=sid, terminal_id=terminal))
                    raise ExecTimedOut(options.timeout or 0)
                time.sleep(POLL_SECONDS)
        finally:
            try:
                side.call(client.release_terminal(session_id=sid, terminal_id=terminal))
            except OSError:
                pass

    def _forward(self, terminal: str, seen: str, options: ExecOptions) -> str:
        """Hand bash the output that arrived since ``seen`` (the client sends all it kept each time)."""
        side = self.side
        output = side.call(side.client.terminal_output(session_id=side.session_id, terminal_id=terminal)).output
        fresh = output.removeprefix(seen)
        if fresh and options.on_data is not None:
            options.on_data(fresh.encode("utf-8", "surrogateescape"))
        return output


async def _ignore_terminal(call_id: str, terminal_id: str) -> None:
    return None


def client_tools(side: ClientSide, shell_argv: Callable[[str], list[str]]) -> dict[str, Tool]:
    """pi's own tools rebuilt on the client's side, for what the client offered."""
    from pi_builtin_tools.bash import BashOptions, create_bash_tool
    from pi_builtin_tools.edit import create_edit_tool
    from pi_builtin_tools.read import create_read_tool
    from pi_builtin_tools.write import create_write_tool

    tools: dict[str, Tool] = {}
    if side.can_read:
        tools["read"] = create_read_tool(ClientReadOperations(side))
    if side.can_read or side.can_write:
        tools["edit"] = create_edit_tool(ClientEditOperations(side))
    if side.can_write:
        tools["write"] = create_write_tool(ClientWriteOperations(side))
    if side.can_terminal:
        local = create_bash_tool()
        remote = create_bash_tool(BashOptions(operations=ClientTerminalOperations(side, shell_argv)))
        in_terminal = remote.execute

        def execute(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
            if confinement() is not None:
                return local.execute(args, ctx)  # type: ignore[no-any-return]  # confined: pi runs it itself
            _call_id.set(ctx.call_id)  # this worker thread's own context: the terminal belongs to this call
            return in_terminal(args, ctx)  # type: ignore[no-any-return]

        tools["bash"] = dataclasses.replace(remote, execute=execute)
    return tools


def builtin_tool(name: str) -> Tool | None:
    """pi's own tool of that name (the module of the ``pi`` entry point pi ships), or None."""
    import importlib

    try:
        module = importlib.import_module(f"pi_builtin_tools.{name}")
    except ImportError:
        return None
    return getattr(module, "TOOL", None)


def swap_in(session: AgentSession, tools: dict[str, Tool]) -> list[str]:
    """Put ``tools`` in place of pi's own tools of their names; a tool a plugin provides instead stays.
    Returns the names swapped."""
    available = session.available_tools
    swapped = []
    for name, tool in tools.items():
        current = available.get(name)
        if current is None or current is not builtin_tool(name):
            continue
        available[name] = tool
        swapped.append(name)
    if swapped:
        session.set_active_tools(session.active_tool_names)
    return swapped
