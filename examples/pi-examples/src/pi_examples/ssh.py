"""ssh: with ``--ssh user@host[:path]``, read, write, edit, bash and the user's ``!`` commands run on a remote
machine over ``ssh`` (key-based auth, bash on the remote); without the flag they stay local.

The ``ssh`` program is looked up on PATH, so tests put a fake one there.
"""

from __future__ import annotations

import base64
import dataclasses
import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pi_builtin_tools.bash import BashOptions, create_bash_tool
from pi_builtin_tools.edit import create_edit_tool
from pi_builtin_tools.read import create_read_tool
from pi_builtin_tools.write import create_write_tool

from pi_core import BeforeAgentStart, Flag, Tool, ToolContext, UserBash, hookimpl
from pi_core.extension import ExtensionContext
from pi_core.toolkit.fileops import EditOperations, ReadOperations, WriteOperations
from pi_core.toolkit.procs import ExecOptions, LocalShellOperations, ShellConfig


@dataclass(frozen=True)
class Remote:
    """Where the tools run: ``host`` (``user@host``) and the remote folder standing in for the local cwd."""

    host: str
    cwd: str
    local_cwd: str

    def path(self, local: str) -> str:
        return local.replace(self.local_cwd, self.cwd, 1)

    def run(self, command: str) -> bytes:
        done = subprocess.run(["ssh", self.host, command], stdin=subprocess.DEVNULL, capture_output=True, check=False)
        if done.returncode != 0:
            raise OSError(f"SSH failed ({done.returncode}): {done.stderr.decode(errors='replace')}")
        return done.stdout


class RemoteRead(ReadOperations):
    def __init__(self, remote: Remote) -> None:
        self.remote = remote

    def access(self, path: str) -> None:
        self.remote.run(f"test -r {shlex.quote(self.remote.path(path))}")

    def read_file(self, path: str) -> bytes:
        return self.remote.run(f"cat {shlex.quote(self.remote.path(path))}")


class RemoteWrite(WriteOperations):
    def __init__(self, remote: Remote) -> None:
        self.remote = remote

    def write_file(self, path: str, content: bytes) -> None:
        encoded = base64.b64encode(content).decode()
        self.remote.run(f"echo {encoded} | base64 -d > {shlex.quote(self.remote.path(path))}")

    def mkdir(self, path: str) -> None:
        self.remote.run(f"mkdir -p {shlex.quote(self.remote.path(path))}")


class RemoteEdit(EditOperations):
    def __init__(self, remote: Remote) -> None:
        self.reader, self.writer = RemoteRead(remote), RemoteWrite(remote)

    def access(self, path: str) -> None:
        self.reader.access(path)

    def read_file(self, path: str) -> bytes:
        return self.reader.read_file(path)

    def write_file(self, path: str, content: bytes) -> None:
        self.writer.write_file(path, content)


class RemoteShell:
    """Shell operations over ssh: the command runs in the remote folder mapped from ``cwd``."""

    def __init__(self, remote: Remote) -> None:
        self.remote = remote
        self.local = LocalShellOperations(shell=ShellConfig("ssh", (remote.host,)))

    def exec(self, command: str, cwd: str, options: ExecOptions) -> int | None:
        remote_command = f"cd {shlex.quote(self.remote.path(cwd))} && {command}"
        return self.local.exec(remote_command, self.remote.local_cwd, options)


LOCAL = {"read": create_read_tool(), "write": create_write_tool(), "edit": create_edit_tool(),
         "bash": create_bash_tool()}


def remote_tool(name: str, remote: Remote) -> Tool:
    if name == "read":
        return create_read_tool(RemoteRead(remote))
    if name == "write":
        return create_write_tool(RemoteWrite(remote))
    if name == "edit":
        return create_edit_tool(RemoteEdit(remote))
    return create_bash_tool(BashOptions(operations=RemoteShell(remote)))


class Ssh:
    """A class plugin: the remote chosen by ``--ssh`` is this session's (one instance per session)."""

    def __init__(self) -> None:
        self.remote: Remote | None = None
        self.tools = [self.dispatching(tool) for tool in LOCAL.values()]

    def dispatching(self, local: Tool) -> Tool:
        """``local`` as the model sees it, running remotely whenever ``--ssh`` is in effect."""

        def execute(args: dict[str, Any], ctx: ToolContext) -> Any:
            tool = local if self.remote is None else remote_tool(local.name, self.remote)
            return tool.execute(args, ctx)

        return dataclasses.replace(local, execute=execute)

    @hookimpl
    def pi_flags(self) -> list[Flag]:
        return [Flag("ssh", "SSH remote: user@host or user@host:/path", type="string")]

    @hookimpl
    def pi_tools(self) -> list[Tool]:
        return self.tools

    @hookimpl
    async def pi_session_start(self, ctx: ExtensionContext) -> None:
        self.remote = None
        target = ctx.get_flag("ssh")
        if not isinstance(target, str) or not target:
            return
        if ":" in target:
            host, remote_cwd = target.split(":", 1)
        else:
            host = target
            found = await ctx.exec("ssh", [host, "pwd"])
            if found.code != 0:
                ctx.ui.notify(f"SSH failed ({found.code}): {found.stderr}", "error")
                return
            remote_cwd = found.stdout.strip()
        self.remote = Remote(host, remote_cwd, str(ctx.cwd))
        ctx.ui.set_status("ssh", ctx.ui.theme.fg("accent", f"SSH: {host}:{remote_cwd}"))
        ctx.ui.notify(f"SSH mode: {host}:{remote_cwd}", "info")

    @hookimpl
    def pi_user_bash(self, command: str, cwd: Path) -> UserBash | None:
        return UserBash(operations=RemoteShell(self.remote)) if self.remote is not None else None

    @hookimpl
    def pi_before_agent_start(self, system_prompt: str) -> BeforeAgentStart | None:
        if self.remote is None:
            return None
        return BeforeAgentStart(system_prompt=system_prompt.replace(
            f"Current working directory: {self.remote.local_cwd}",
            f"Current working directory: {self.remote.cwd} (via SSH: {self.remote.host})"))
