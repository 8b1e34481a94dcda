"""CONTRIBUTING.md's "Write your first tool pack" followed literally: its files written, its commands run."""

from __future__ import annotations

import re
import shlex
import subprocess

import pytest

from .conftest import REPO, Eco

SECTION = "## Write your first tool pack"
FENCE = re.compile(r"^```(\w+)\n(.*?)^```", re.MULTILINE | re.DOTALL)


def walkthrough_blocks() -> list[tuple[str, str]]:
    text = (REPO / "CONTRIBUTING.md").read_text(encoding="utf-8")
    start = text.index(SECTION)
    end = text.find("\n## ", start + len(SECTION))
    return [(m.group(1), m.group(2)) for m in FENCE.finditer(text[start:end if end != -1 else None])]


def test_the_walkthrough_has_files_and_commands() -> None:
    blocks = walkthrough_blocks()
    files = [body.splitlines()[0] for lang, body in blocks if lang in ("toml", "python")]
    assert all(first.startswith("# pi-file-stats/") for first in files), files
    assert [lang for lang, _ in blocks].count("sh") == 1


@pytest.mark.venv
def test_following_the_walkthrough_installs_a_working_tool(eco: Eco) -> None:
    commands: list[str] = []
    for lang, body in walkthrough_blocks():
        if lang == "sh":
            commands += [line for line in body.splitlines() if line.strip() and not line.startswith("#")]
            continue
        relative = body.splitlines()[0].removeprefix("# ").strip()
        target = eco.cwd / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(body, encoding="utf-8")
    outputs: dict[str, str] = {}
    for command in commands:
        argv = shlex.split(command)
        if argv[0] == "pi":
            result = eco.pi(*argv[1:])
        else:
            assert argv[0] == "python", command
            result = subprocess.run([str(eco.python), *argv[1:], "-p", "no:cacheprovider"], capture_output=True,
                                    text=True, cwd=eco.cwd, env=eco.env(), timeout=120, check=False)
        assert result.returncode == 0, f"{command}\n{result.stdout}\n{result.stderr}"
        outputs[command] = result.stdout
    tools = next(out for command, out in outputs.items() if command == "pi tools")
    row = next(line for line in tools.splitlines() if " file_stats " in f" {line} ")
    assert row.startswith("*") and "file_stats" in row  # installed and active
    assert "3 passed" in outputs["python -m pytest pi-file-stats/tests"]
    assert "tools: file_stats" in outputs["pi list"]
    installed = outputs["pi install -e ./pi-file-stats"]
    assert "tools: file_stats" in installed and "FAILED" not in installed, installed
    assert "Requirement already satisfied" not in installed, installed
