"""bash: run a shell command in the working directory and return its combined output."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pi_core import Tool, ToolContext, ToolError, ToolResult, hookimpl
from pi_core.toolkit.builtin import argument, builtin_tool, parameters

if TYPE_CHECKING:
    from pi_core.toolkit.procs import ShellOperations

DEFAULT_ACTIVE = True


def command_parameters(shell: str) -> dict[str, Any]:
    """The arguments of a tool that runs a command line in ``shell`` (bash, and powershell after it)."""
    return parameters(["command"], command=argument("string", f"The {shell} command line to run"),
                      timeout=argument("number", "Seconds before the command is killed (optional; no limit by default)"))


PARAMETERS = command_parameters("bash")
# What a command tool returns, told after the sentence that names its shell.
OUTPUT_TERMS = (
    "stdout and stderr come back together. "
    "Only the last 2000 lines or 50KB of output are returned, whichever limit is reached first; when output "
    "is cut, the complete output is saved to a temp file whose path is given. "
    "An optional timeout in seconds can be set."
)
DESCRIPTION = "Run a command with bash in the current working directory; " + OUTPUT_TERMS
SNIPPET = "Run bash commands such as ls, grep or find"
NUL_IN_COMMAND = ("The command contains a NUL character, which no shell command line can hold. Remove it; "
                  "to produce a NUL byte, write printf '\\0'.")


@dataclass(eq=False, repr=False)
class SpawnContext:
    """What a spawn hook may rewrite before the command starts."""

    command: str
    cwd: str
    env: dict[str, str]


@dataclass(eq=False, repr=False)
class BashOptions:
    """How bash runs: the backend, a prefix line (setting ``shellCommandPrefix``), a spawn hook, ``shellPath``."""

    operations: ShellOperations | None = None
    command_prefix: str | None = None
    spawn_hook: Callable[[SpawnContext], SpawnContext] | None = None
    shell_path: str | None = None
    temp_prefix: str = "pi-bash"

    def backend(self) -> ShellOperations:
        from pi_core.toolkit.procs import LocalShellOperations

        return self.operations or LocalShellOperations(shell_path=self.shell_path)


def make_execute(options: BashOptions) -> Callable[[dict[str, Any], ToolContext], ToolResult]:
    """The ``execute`` function for a bash-like tool configured by ``options``.

    Settings the session knows and ``options`` leaves open come from ``ctx.settings``:
    ``shell_path`` (setting ``shellPath``) and ``shell_command_prefix`` (``shellCommandPrefix``).
    """
    # The shell toolkit loads with the first command, not with pi (a run may never use bash).
    default_ops: list[ShellOperations] = []

    def execute(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        from pi_core.toolkit.procs import LocalShellOperations, shell_env
        from pi_core.toolkit.shell import execute_shell, shell_tool_result

        if "\x00" in args["command"]:
            raise ToolError(NUL_IN_COMMAND)
        if not default_ops:
            default_ops.append(options.backend())
        ops = default_ops[0]
        session_shell = ctx.settings.shell_path
        if session_shell and options.operations is None and options.shell_path is None:
            ops = LocalShellOperations(shell_path=session_shell)
        prefix = options.command_prefix or ctx.settings.shell_command_prefix
        command = f"{prefix}\n{args['command']}" if prefix else args["command"]
        spawn = SpawnContext(command, str(ctx.cwd), shell_env(ctx.env))
        if options.spawn_hook is not None:
            spawn = options.spawn_hook(spawn)
        timeout = args.get("timeout")
        # Snapshots cost a tail truncation each: skip them when nobody listens.
        on_update = ctx.update if ctx.on_update is not None else None
        started = time.monotonic()
        outcome = execute_shell(spawn.command, spawn.cwd, operations=ops, signal=ctx.signal, timeout=timeout,
                                env=spawn.env, on_update=on_update, temp_prefix=options.temp_prefix,
                                output_dir=ctx.settings.full_output_dir())
        return shell_tool_result(outcome, timeout, time.monotonic() - started)

    return execute


# What a call resolves to in a codemode script (pi_core.toolkit.shell.structured_output), also on a non-zero exit.
OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "output": {"type": "string", "description": "Combined stdout and stderr, possibly truncated"},
        "truncated": {"type": "boolean"},
        "full_output_path": {"type": "string", "description": "Full output, when truncated"},
        "exit_code": {"type": "number"},
        "wall_time_seconds": {"type": "number"},
    },
    "required": ["output", "truncated", "exit_code", "wall_time_seconds"],
}


def create_bash_tool(options: BashOptions | None = None) -> Tool:
    """A bash tool with its own backend/prefix/shell; the plugin registers the default one."""
    return builtin_tool("bash", DESCRIPTION, PARAMETERS, make_execute(options or BashOptions()),
                        active_by_default=DEFAULT_ACTIVE, prompt_snippet=SNIPPET, output_schema=OUTPUT_SCHEMA)


TOOL = create_bash_tool()
execute = TOOL.execute


@hookimpl
def pi_tools() -> list[Tool]:
    return [TOOL]
