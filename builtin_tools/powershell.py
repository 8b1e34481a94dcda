"""powershell: run a PowerShell command in the working directory (bash's runner with another shell)."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from typing import Any

from pi_builtin_tools.bash import BashOptions, make_execute

from pi_core import Tool, ToolError, hookimpl
from pi_core.toolkit.procs import LocalShellOperations, ShellConfig

DEFAULT_ACTIVE = False

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "command": {"type": "string", "description": "The PowerShell command line to run"},
        "timeout": {"type": "number", "description": "Seconds before the command is killed (optional; no limit by default)"},
    },
    "required": ["command"],
}

DESCRIPTION = (
    "Run a PowerShell command in the current working directory; stdout and stderr come back together. "
    "Only the last 2000 lines or 50KB of output are returned, whichever limit is reached first; when output "
    "is cut, the complete output is saved to a temp file whose path is given. "
    "An optional timeout in seconds can be set."
)
SNIPPET = "Run PowerShell commands"

# Without this, Windows PowerShell writes output in the console code page and non-ASCII text breaks.
UTF8_PREFIX = "try { [Console]::OutputEncoding=[System.Text.Encoding]::UTF8 } catch {}"
POWERSHELL_ARGS = ("-NoLogo", "-NoProfile", "-NonInteractive", "-Command")


@dataclass
class LocalPowerShellOperations(LocalShellOperations):
    """``pwsh`` (or Windows ``powershell``) from PATH, or ``shell_path``; found when first used."""

    missing_cwd_hint: str = "Cannot execute PowerShell commands."

    def shell_config(self) -> ShellConfig:
        if self.shell is not None:
            return self.shell
        if self.shell_path:
            if not os.path.exists(self.shell_path):
                raise ToolError(f"Custom shell path not found: {self.shell_path}")
            return ShellConfig(self.shell_path, POWERSHELL_ARGS)
        found = shutil.which("pwsh") or shutil.which("powershell")
        if found is None:
            raise ToolError("No PowerShell found: neither pwsh nor powershell is on PATH. "
                            "Install PowerShell, or use the bash tool instead.")
        return ShellConfig(found, POWERSHELL_ARGS)


def powershell_options(shell_path: str | None = None) -> BashOptions:
    return BashOptions(operations=LocalPowerShellOperations(shell_path=shell_path), command_prefix=UTF8_PREFIX,
                       temp_prefix="pi-powershell")


execute = make_execute(powershell_options())

TOOL = Tool(name="powershell", active_by_default=DEFAULT_ACTIVE, label="powershell", description=DESCRIPTION, parameters=PARAMETERS,
            execute=execute, prompt_snippet=SNIPPET, coercion="typebox")


@hookimpl
def pi_tools() -> list[Tool]:
    return [TOOL]
