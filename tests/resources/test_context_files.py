"""AGENTS.md / CLAUDE.md discovery (docs/config.md#context-files)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pi_core.resources import load_resources
from pi_core.resources.context_files import discover_context_files


@pytest.fixture
def tree(tmp_path: Path) -> tuple[Path, Path, Path]:
    """(root, cwd = root/a/b, agent dir). Files above tmp_path are filtered out in ``found``."""
    cwd = tmp_path / "a" / "b"
    cwd.mkdir(parents=True)
    agent = tmp_path / "agent"
    agent.mkdir()
    return tmp_path, cwd, agent


def found(cwd: Path, agent: Path, root: Path, **kwargs: object) -> list[tuple[str, str]]:
    # Only what lies inside the sandbox: an AGENTS.md in /tmp or / would leak into every run.
    return [(os.path.relpath(f.path, root), f.content) for f in discover_context_files(cwd, agent, **kwargs)
            if str(f.path).startswith(str(root))]


def test_global_first_then_outermost_to_cwd(tree: tuple[Path, Path, Path]) -> None:
    root, cwd, agent = tree
    (agent / "AGENTS.md").write_text("global")
    (root / "AGENTS.md").write_text("root")
    (root / "a" / "CLAUDE.md").write_text("a")
    (cwd / "AGENTS.md").write_text("b")
    assert found(cwd, agent, root) == [("agent/AGENTS.md", "global"), ("AGENTS.md", "root"),
                                       ("a/CLAUDE.md", "a"), ("a/b/AGENTS.md", "b")]


def test_one_file_per_directory_agents_wins(tree: tuple[Path, Path, Path]) -> None:
    root, cwd, agent = tree
    (cwd / "CLAUDE.md").write_text("claude")
    (cwd / "AGENTS.md").write_text("agents")
    (agent / "CLAUDE.md").write_text("global claude")
    assert found(cwd, agent, root) == [("agent/CLAUDE.md", "global claude"), ("a/b/AGENTS.md", "agents")]


def test_content_verbatim(tree: tuple[Path, Path, Path]) -> None:
    root, cwd, agent = tree
    (cwd / "AGENTS.md").write_bytes(b"  line one\r\n\nlast  \n")
    assert found(cwd, agent, root) == [("a/b/AGENTS.md", "  line one\r\n\nlast  \n")]


def test_agent_dir_inside_walk_is_not_repeated(tmp_path: Path) -> None:
    cwd = tmp_path / "proj"
    cwd.mkdir()
    (cwd / "AGENTS.md").write_text("both")
    assert found(cwd, cwd, tmp_path) == [("proj/AGENTS.md", "both")]


def test_switch_disables(tree: tuple[Path, Path, Path]) -> None:
    root, cwd, agent = tree
    (cwd / "AGENTS.md").write_text("b")
    assert discover_context_files(cwd, agent, no_context_files=True) == []
    res = load_resources(cwd, agent, no_context_files=True)
    assert res.context_files == []
    assert [f.content for f in load_resources(cwd, agent).context_files if str(f.path).startswith(str(root))] == ["b"]


def test_unreadable_candidate_warns_and_next_name_is_used(tree: tuple[Path, Path, Path]) -> None:
    root, cwd, agent = tree
    (cwd / "AGENTS.md").mkdir()  # exists but cannot be read as a file
    (cwd / "CLAUDE.md").write_text("fallback")
    warnings: list[str] = []
    assert found(cwd, agent, root, warn=warnings.append) == [("a/b/CLAUDE.md", "fallback")]
    assert len(warnings) == 1
    assert warnings[0].startswith(f"Warning: Could not read {cwd / 'AGENTS.md'}: ")
