"""The PowerShell backend of the powershell tool: ``pwsh`` (or ``powershell``) found when a command runs."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass

from pi_core import ToolError
from pi_core.toolkit.procs import LocalShellOperations, ShellConfig

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
