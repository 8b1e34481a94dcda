"""gondolin: read, write, edit, bash, ls, find, grep and the user's ``!`` commands run inside a Gondolin micro-VM,
with the project folder mounted at /workspace (changes there write through to the host; the rest of the guest
is the VM's own).

Pi's example drives the VM with the ``@earendil-works/gondolin`` npm library (QEMU underneath). pi talks to it
through a *bridge* program instead: ``gondolin-bridge`` on PATH, or the command line given by ``--gondolin-bridge``
or ``$PI_GONDOLIN_BRIDGE`` (split like a shell command, e.g. ``node gondolin-bridge.mjs``). A real bridge is a
few dozen lines on that npm library; none ships here, and the tests only exercise a fake bridge that maps
/workspace onto the host folder. The real VM is not exercised by this package's tests.

Bridge protocol (JSON lines, UTF-8). pi starts the bridge in the host project folder and writes one request per
line on its stdin: ``{"id": N, "op": "...", ...}`` (ids are increasing integers; several requests may be in
flight; answers may come in any order). The bridge answers each on stdout with one line,
``{"id": N, "ok": true, "result": {...}}`` or ``{"id": N, "ok": false, "error": {"code": "ENOENT",
"message": "..."}}``; an errno name as ``code`` reaches the tools as that file-system error, anything else as
"Gondolin VM: <message>". Anything on stdout that is not such a line ends the session's VM (pi reports the
line); stderr is free text, and its last lines are quoted when the bridge fails. Byte data is base64.

- ``start`` ``{"mounts": {"/workspace": HOST_DIR}, "sessionLabel": "pi <folder>"}`` -> ``{"id": VM_ID}``;
  always the first request.
- ``exec`` ``{"argv": [...], "cwd": GUEST_DIR, "env": {...} | null}``: before the answer, any number of
  ``{"id": N, "stream": "stdout" | "stderr", "data": BASE64}`` lines; then ``-> {"exitCode": INT | null}``
  (null: ended by a signal).
- ``signal`` ``{"target": EXEC_ID}`` -> ``{}``: stop that exec (abort or timeout); the exec still answers.
- ``readFile`` ``{"path"}`` -> ``{"data": BASE64}``; ``writeFile`` ``{"path", "data": BASE64}`` -> ``{}``.
- ``stat`` ``{"path"}`` -> ``{"type": "file" | "directory" | "other", "size": INT}`` (symlinks followed).
- ``listDir`` ``{"path"}`` -> ``{"entries": [NAME, ...]}`` (no ``.``/``..``).
- ``mkdir`` ``{"path", "recursive": true}`` -> ``{}``; ``access`` ``{"path"}`` -> ``{}`` if it exists.
- ``close`` ``{}`` -> ``{}``, then the bridge stops the VM and exits (pi kills it after 5 s). End of input on
  stdin means pi is gone: stop the VM and exit. An exec told to stop (``signal``) must answer within 5 s.

The VM starts at session start and stops at session end; a failed start is reported and retried by the next
tool call. ``/gondolin`` shows the VM id, the two workspaces and the guest shell.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pi_builtin_tools.bash import BashOptions, create_bash_tool
from pi_builtin_tools.edit import create_edit_tool
from pi_builtin_tools.find import FindOptions, create_find_tool
from pi_builtin_tools.grep import create_grep_tool
from pi_builtin_tools.ls import create_ls_tool
from pi_builtin_tools.read import create_read_tool
from pi_builtin_tools.write import create_write_tool

from pi_core import (
    BeforeAgentStart,
    Flag,
    SlashCommand,
    Tool,
    ToolContext,
    ToolError,
    UserBash,
    hookimpl,
)
from pi_core.extension import CommandContext, ExtensionContext
from pi_core.tools import ToolResult

from .bridge import BridgeClient, GondolinError, VmClient, bridge_command
from .grep import vm_grep
from .ops import GUEST_WORKSPACE, VmFiles, VmFind, VmShell

__all__ = ["GUEST_WORKSPACE", "BridgeClient", "GondolinError", "VmClient", "guest_cwd_line"]

STATUS_KEY = "gondolin"
BASH_PROBE = ["/bin/sh", "-lc", "command -v bash || true"]


def guest_cwd_line(host_cwd: str) -> str:
    return f"Current working directory: {GUEST_WORKSPACE} (Gondolin VM; host workspace mounted from {host_cwd})"


class GondolinVm:
    """The session's VM: started once (concurrent callers wait for the same start), closed at session end."""

    def __init__(self) -> None:
        self.vm: VmClient | None = None
        self.host_cwd = ""
        self.bridge: str | None = None
        self.shell_path = "/bin/sh"
        self._lock: asyncio.Lock | None = None

    def reset(self, host_cwd: str, bridge: str | None) -> None:
        self.vm, self.host_cwd, self.bridge, self.shell_path, self._lock = None, host_cwd, bridge, "/bin/sh", None

    async def ensure(self, ctx: ExtensionContext | None) -> VmClient:
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self.vm is None:
                self.vm = await self._start(ctx)
            return self.vm

    async def _start(self, ctx: ExtensionContext | None) -> VmClient:
        if not self.host_cwd and ctx is not None:
            self.host_cwd = str(ctx.cwd)
        if ctx is not None:
            ctx.ui.set_status(STATUS_KEY, ctx.ui.theme.fg("accent", f"Gondolin: starting {GUEST_WORKSPACE}"))
        try:
            vm, self.shell_path = await asyncio.to_thread(self._boot)
        except GondolinError:
            if ctx is not None:
                ctx.ui.set_status(STATUS_KEY, ctx.ui.theme.fg("error", "Gondolin: unavailable"))
            raise
        if ctx is not None:
            ctx.ui.set_status(STATUS_KEY, ctx.ui.theme.fg("accent", f"Gondolin: {vm.id[:8]} ({GUEST_WORKSPACE})"))
            ctx.ui.notify(f"Gondolin VM ready. {self.host_cwd} is mounted at {GUEST_WORKSPACE}.", "info")
        return vm

    def _boot(self) -> tuple[VmClient, str]:
        client = BridgeClient(bridge_command(self.bridge), self.host_cwd)
        try:
            client.start(GUEST_WORKSPACE, f"pi {os.path.basename(self.host_cwd)}")
            found = bytearray()
            client.exec(BASH_PROBE, cwd=GUEST_WORKSPACE, on_stdout=found.extend)
        except BaseException:
            client.close()
            raise
        return client, found.decode("utf-8", "replace").strip() or "/bin/sh"

    async def stop(self, ctx: ExtensionContext) -> None:
        vm, self.vm = self.vm, None
        if vm is None:
            return
        ctx.ui.set_status(STATUS_KEY, ctx.ui.theme.fg("muted", "Gondolin: stopping"))
        try:
            await asyncio.to_thread(vm.close)
        finally:
            ctx.ui.set_status(STATUS_KEY, None)


Build = Callable[[VmClient, str, str], Tool]  # (the VM, the host workspace, the guest shell) -> the tool

BUILDERS: dict[str, Build] = {
    "read": lambda vm, cwd, shell: create_read_tool(VmFiles(vm, cwd)),
    "write": lambda vm, cwd, shell: create_write_tool(VmFiles(vm, cwd)),
    "edit": lambda vm, cwd, shell: create_edit_tool(VmFiles(vm, cwd)),
    "bash": lambda vm, cwd, shell: create_bash_tool(BashOptions(operations=VmShell(vm, cwd, shell))),
    "ls": lambda vm, cwd, shell: create_ls_tool(VmFiles(vm, cwd)),
    "find": lambda vm, cwd, shell: create_find_tool(FindOptions(operations=VmFind(vm, cwd))),
}
LOCAL_TOOLS = {"read": create_read_tool(), "write": create_write_tool(), "edit": create_edit_tool(),
               "bash": create_bash_tool(), "ls": create_ls_tool(), "find": create_find_tool(),
               "grep": create_grep_tool()}


async def _vm_for_tool(state: GondolinVm, ctx: ToolContext) -> VmClient:
    try:
        return await state.ensure(ctx.pi)
    except GondolinError as err:
        raise ToolError(str(err)) from err


def in_vm(local: Tool, build: Build, state: GondolinVm) -> Tool:
    """``local`` as the model sees it, run by the same tool built on the VM's operations with /workspace as cwd."""

    async def execute(args: dict[str, Any], ctx: ToolContext) -> Any:
        vm = await _vm_for_tool(state, ctx)
        tool = build(vm, state.host_cwd or str(ctx.cwd), state.shell_path)
        guest_ctx = dataclasses.replace(ctx, cwd=Path(GUEST_WORKSPACE))
        try:
            if inspect.iscoroutinefunction(tool.execute):
                return await tool.execute(args, guest_ctx)
            return await asyncio.to_thread(tool.execute, args, guest_ctx)
        except GondolinError as err:
            raise ToolError(str(err)) from err

    return dataclasses.replace(local, execute=execute)


def grep_in_vm(state: GondolinVm) -> Tool:
    """pi's grep as the model sees it, searching the VM's workspace."""

    async def execute(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        vm = await _vm_for_tool(state, ctx)
        try:
            return await asyncio.to_thread(vm_grep, vm, state.host_cwd or str(ctx.cwd), args, ctx.signal)
        except GondolinError as err:
            raise ToolError(str(err)) from err

    return dataclasses.replace(LOCAL_TOOLS["grep"], execute=execute)


class Gondolin:
    """A class plugin: the VM is this session's (one instance per session), started at its start, closed at its
    end; the tools the instance contributes run in it."""

    def __init__(self) -> None:
        self.state = GondolinVm()
        self.tools = [*(in_vm(LOCAL_TOOLS[name], build, self.state) for name, build in BUILDERS.items()),
                      grep_in_vm(self.state)]

    async def show_status(self, args: str, ctx: CommandContext) -> None:
        state = self.state
        vm = await state.ensure(ctx)
        ctx.ui.notify("\n".join([f"Gondolin VM: {vm.id}", f"Host workspace: {state.host_cwd}",
                                 f"Guest workspace: {GUEST_WORKSPACE}", f"Shell: {state.shell_path}"]), "info")

    @hookimpl
    def pi_flags(self) -> list[Flag]:
        return [Flag("gondolin-bridge", "Command that runs the Gondolin VM bridge (default: gondolin)", type="string")]

    @hookimpl
    def pi_tools(self) -> list[Tool]:
        return self.tools

    @hookimpl
    def pi_commands(self) -> list[SlashCommand]:
        return [SlashCommand("gondolin", "Show Gondolin VM status", self.show_status)]

    @hookimpl
    async def pi_session_start(self, ctx: ExtensionContext) -> None:
        bridge = ctx.get_flag("gondolin-bridge")
        self.state.reset(str(ctx.cwd), bridge if isinstance(bridge, str) and bridge else None)
        await self.state.ensure(ctx)

    @hookimpl
    async def pi_session_shutdown(self, ctx: ExtensionContext) -> None:
        await self.state.stop(ctx)

    @hookimpl
    async def pi_user_bash(self, ctx: ExtensionContext) -> UserBash:
        vm = await self.state.ensure(ctx)
        return UserBash(operations=VmShell(vm, self.state.host_cwd, self.state.shell_path))

    @hookimpl
    async def pi_before_agent_start(self, ctx: ExtensionContext, system_prompt: str) -> BeforeAgentStart:
        await self.state.ensure(ctx)
        local_line = f"Current working directory: {self.state.host_cwd}"
        guest_line = guest_cwd_line(self.state.host_cwd)
        if local_line in system_prompt:
            return BeforeAgentStart(system_prompt=system_prompt.replace(local_line, guest_line, 1))
        return BeforeAgentStart(system_prompt=f"{system_prompt}\n\n{guest_line}")
