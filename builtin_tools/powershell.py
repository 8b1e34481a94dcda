"""powershell: run a PowerShell command in the working directory (bash's runner with another shell)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from pi_builtin_tools.bash import (
    OUTPUT_TERMS,
    BashOptions,
    command_parameters,
    make_execute,
)

from pi_core import Tool, ToolContext, ToolResult, hookimpl
from pi_core.toolkit.builtin import builtin_tool

DEFAULT_ACTIVE = False

PARAMETERS = command_parameters("PowerShell")
DESCRIPTION = "Run a PowerShell command in the current working directory; " + OUTPUT_TERMS
SNIPPET = "Run PowerShell commands"

# Without this, Windows PowerShell writes output in the console code page and non-ASCII text breaks.
UTF8_PREFIX = "try { [Console]::OutputEncoding=[System.Text.Encoding]::UTF8 } catch {}"


def __getattr__(name: str) -> Any:
    # The shell toolkit (and this backend) load when a command runs, not with pi.
    if name == "LocalPowerShellOperations":
        from pi_builtin_tools._powershell_shell import LocalPowerShellOperations

        return LocalPowerShellOperations
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def powershell_options(shell_path: str | None = None) -> BashOptions:
    from pi_builtin_tools._powershell_shell import LocalPowerShellOperations

    return BashOptions(operations=LocalPowerShellOperations(shell_path=shell_path), command_prefix=UTF8_PREFIX,
                       temp_prefix="pi-powershell")


@functools.cache
def _default_execute() -> Callable[[dict[str, Any], ToolContext], ToolResult]:
    return make_execute(powershell_options())


def execute(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    return _default_execute()(args, ctx)

TOOL = builtin_tool("powershell", DESCRIPTION, PARAMETERS, execute, active_by_default=DEFAULT_ACTIVE,
                    prompt_snippet=SNIPPET)


@hookimpl
def pi_tools() -> list[Tool]:
    return [TOOL]
