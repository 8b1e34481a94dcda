"""tmux: the start-up header of a real ``pi`` lists what the session loaded (the project's AGENTS.md, a skill,
a prompt template) and repeats the CLI's start-up warnings, the ones it printed to stderr."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from tmux_kit import pi_rig

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


def test_header_shows_loaded_context_and_startup_warnings(tmp_path: Path) -> None:
    with pi_rig(tmp_path, "header") as rig:
        (rig.cwd / "AGENTS.md").write_text("Answer briefly.\n")
        skill = rig.home / "skills" / "pdf"
        skill.mkdir(parents=True)
        (skill / "SKILL.md").write_text("---\nname: pdf\ndescription: Read PDF files.\n---\nUse pdftotext.\n")
        (rig.home / "prompts").mkdir()
        (rig.home / "prompts" / "review.md").write_text("Review the diff.\n")
        (rig.home / "settings.json").write_text('{"theme": "dark",\n "quietStartup": oops}\n')
        rig.start()
        settings = rig.home / "settings.json"
        flat = "".join(rig.tmux.wait_for(f"Warning: Invalid settings file {settings}", flat=True).split())
        assert f"Context:{rig.cwd / 'AGENTS.md'}" in flat
        assert "Skills:pdf" in flat and "Templates:/review" in flat
        rig.command("/quit")
        rig.tmux.wait_for("EXITED=0")
