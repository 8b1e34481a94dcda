"""Documentation that must stay true: every hook documented with its signature."""

from __future__ import annotations

import inspect
from pathlib import Path

from pi_core import hookspecs

REPO = Path(__file__).resolve().parents[2]


def test_every_hookspec_is_documented_with_its_signature() -> None:
    text = (REPO / "CONTRIBUTING.md").read_text()
    for name, function in inspect.getmembers(hookspecs, inspect.isfunction):
        if not name.startswith("pi_"):
            continue
        params = ", ".join(
            f"{p.name}: {p.annotation}" if p.annotation is not inspect.Parameter.empty else p.name
            for p in inspect.signature(function).parameters.values())
        documented = f"`{name}({params})".replace("|", "\\|")  # pipes are escaped inside a Markdown table
        assert documented in text or f"`{name}({params})" in text, f"{name}({params}) is not documented in CONTRIBUTING.md"


def test_readme_names_two_setup_commands() -> None:
    readme = (REPO / "README.md").read_text()
    setup = readme.split("## Set-up", 1)[1].split("##", 1)[0]
    commands = [line for line in setup.splitlines() if line.startswith("    ")]
    assert len(commands) == 2
    assert "pytest" in commands[1] and (REPO / ".ci" / "run").read_text().count("pytest") >= 1
