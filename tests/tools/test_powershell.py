"""powershell tool: bash's runner under PowerShell, off by default, a clear error where none is installed."""

from __future__ import annotations

import re
from pathlib import Path

import pi_builtin_tools.bash as bash_module
import pi_builtin_tools.powershell as ps_module
import pytest
from pi_builtin_tools.bash import make_execute
from pi_builtin_tools.powershell import TOOL, UTF8_PREFIX, powershell_options

from pi_core.errors import ToolError
from pi_core.tools import ToolContext, ToolResult

# Stands in for pwsh: checks the arguments, drops the UTF-8 prefix line and runs the rest with sh.
FAKE_PWSH = """#!/bin/sh
[ "$1 $2 $3 $4" = "-NoLogo -NoProfile -NonInteractive -Command" ] || { echo "bad args: $*"; exit 9; }
printf '%s\\n' "$5" | head -n 1 > "$(dirname "$0")/first-line"
printf '%s\\n' "$5" | tail -n +2 | sh
"""


@pytest.fixture
def fake_pwsh(tmp_path: Path) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    pwsh = bin_dir / "pwsh"
    pwsh.write_text(FAKE_PWSH)
    pwsh.chmod(0o755)
    return pwsh


def text_of(result: ToolResult) -> str:
    return result.content[0].text  # type: ignore[union-attr]


def test_schema_same_as_bash_and_off_by_default() -> None:
    def shape(schema: dict) -> dict:
        return {**schema, "properties": {k: {"type": v["type"]} for k, v in schema["properties"].items()}}

    assert shape(TOOL.json_schema) == shape(bash_module.TOOL.json_schema)
    assert TOOL.name == TOOL.label == "powershell" and TOOL.coercion == "typebox"
    assert ps_module.DEFAULT_ACTIVE is False
    assert "PowerShell" in TOOL.description and "2000 lines" in TOOL.description


def test_clear_error_without_powershell(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ToolError, match="No PowerShell found"):
        TOOL.execute({"command": "Get-Date"}, ToolContext(cwd=tmp_path))


def test_runs_pwsh_from_path_with_utf8_prefix(tmp_path: Path, fake_pwsh: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", f"{fake_pwsh.parent}:/usr/bin:/bin")
    result = TOOL.execute({"command": "echo from-powershell"}, ToolContext(cwd=tmp_path))
    assert text_of(result) == "from-powershell\n"  # type: ignore[arg-type]
    assert (fake_pwsh.parent / "first-line").read_text() == UTF8_PREFIX + "\n"


def test_shares_bash_outcomes_and_spill_prefix(tmp_path: Path, fake_pwsh: Path) -> None:
    execute = make_execute(powershell_options(shell_path=str(fake_pwsh)))
    ctx = ToolContext(cwd=tmp_path)
    with pytest.raises(ToolError) as info:
        execute({"command": "echo bye; exit 2"}, ctx)
    assert str(info.value) == "bye\n\n\nCommand exited with code 2"
    with pytest.raises(ToolError) as info:
        execute({"command": "sleep 30", "timeout": 0.3}, ctx)
    assert str(info.value) == "Command timed out after 0.3 seconds"
    text = text_of(execute({"command": "seq 1 3000"}, ctx))
    match = re.search(r"Full output: (\S+)\]$", text)
    assert match and Path(match.group(1)).name.startswith("pi-powershell-")


def test_missing_cwd_names_powershell(fake_pwsh: Path) -> None:
    execute = make_execute(powershell_options(shell_path=str(fake_pwsh)))
    with pytest.raises(ToolError) as info:
        execute({"command": "echo"}, ToolContext(cwd=Path("/no/such/dir")))
    assert str(info.value) == "Working directory does not exist: /no/such/dir\nCannot execute PowerShell commands."
