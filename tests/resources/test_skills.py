"""Skills: parsing, validation, discovery, prompt block and /skill: expansion (docs/config.md#skills)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pi_core.resources import Resources, expand_input, load_resources
from pi_core.resources.skills import (
    SkillOrigin,
    collect_skill_files,
    expand_skill_command,
    format_skills_for_prompt,
    load_skill_file,
    load_skills,
)

ORIGIN = SkillOrigin("auto", "user")


def write_skill(directory: Path, frontmatter: str | None, body: str = "# Body\n\nDo the thing.\n",
                filename: str = "SKILL.md") -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / filename
    text = body if frontmatter is None else f"---\n{frontmatter}\n---\n\n{body}"
    path.write_text(text)
    return path


def messages(diagnostics: list) -> list[str]:  # type: ignore[type-arg]
    return [d.message for d in diagnostics]


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    return home


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    cwd, agent = tmp_path / "work" / "proj", tmp_path / "agent"
    cwd.mkdir(parents=True)
    (tmp_path / "work" / ".git").mkdir()  # the .agents/skills walk stops at this git root
    agent.mkdir()
    return cwd, agent


# --- one file ---------------------------------------------------------------------------------

def test_valid_skill_loads_without_diagnostics(tmp_path: Path) -> None:
    path = write_skill(tmp_path / "valid-skill", "name: valid-skill\ndescription: A valid skill for testing purposes.")
    skill, diagnostics = load_skill_file(path, ORIGIN)
    assert diagnostics == []
    assert skill is not None
    assert (skill.name, skill.description) == ("valid-skill", "A valid skill for testing purposes.")
    assert skill.file_path == path and skill.base_dir == path.parent
    assert skill.disable_model_invocation is False


@pytest.mark.parametrize(("dirname", "name", "expected"), [
    ("name-mismatch", "different-name", 'name "different-name" does not match parent directory "name-mismatch"'),
    ("Invalid_Name", "Invalid_Name", "name contains invalid characters (must be lowercase a-z, 0-9, hyphens only)"),
    ("a" * 65, "a" * 65, "name exceeds 64 characters (65)"),
    ("bad--name", "bad--name", "name must not contain consecutive hyphens"),
    ("-edge-", "-edge-", "name must not start or end with a hyphen"),
])
def test_name_problems_warn_but_load(tmp_path: Path, dirname: str, name: str, expected: str) -> None:
    path = write_skill(tmp_path / dirname, f"name: {name}\ndescription: Fine.")
    skill, diagnostics = load_skill_file(path, ORIGIN)
    assert skill is not None and skill.name == name
    assert expected in messages(diagnostics)
    assert all(d.type == "warning" and d.path == path for d in diagnostics)


def test_long_description_warns(tmp_path: Path) -> None:
    path = write_skill(tmp_path / "wordy", f"description: {'x' * 1025}")
    skill, diagnostics = load_skill_file(path, ORIGIN)
    assert skill is not None
    assert messages(diagnostics) == ["description exceeds 1024 characters (1025)"]


@pytest.mark.parametrize("frontmatter", [None, "name: missing-description", "description: '   '"])
def test_missing_description_is_not_loaded(tmp_path: Path, frontmatter: str | None) -> None:
    path = write_skill(tmp_path / "missing-description", frontmatter)
    skill, diagnostics = load_skill_file(path, ORIGIN)
    assert skill is None
    assert "description is required" in messages(diagnostics)


def test_invalid_yaml_is_not_loaded_and_names_the_line(tmp_path: Path) -> None:
    path = write_skill(tmp_path / "invalid-yaml", "name: invalid-yaml\ndescription: [unclosed bracket")
    skill, diagnostics = load_skill_file(path, ORIGIN)
    assert skill is None
    assert len(diagnostics) == 1 and "at line" in diagnostics[0].message


def test_unknown_fields_are_ignored(tmp_path: Path) -> None:
    path = write_skill(tmp_path / "unknown-field", "name: unknown-field\ndescription: Ok.\nauthor: someone\n"
                                                   "version: 1.0\nmetadata:\n  nested:\n    deep: true\n"
                                                   "allowed-tools: [read, bash]\nlicense: MIT")
    skill, diagnostics = load_skill_file(path, ORIGIN)
    assert skill is not None and diagnostics == []


def test_multiline_description_keeps_newlines(tmp_path: Path) -> None:
    path = write_skill(tmp_path / "multiline-description",
                       "name: multiline-description\ndescription: |\n  This is a multiline description.\n"
                       "  It spans multiple lines.")
    skill, diagnostics = load_skill_file(path, ORIGIN)
    assert skill is not None and diagnostics == []
    assert skill.description == "This is a multiline description.\nIt spans multiple lines."


def test_name_defaults_to_directory(tmp_path: Path) -> None:
    skill, diagnostics = load_skill_file(write_skill(tmp_path / "from-dir", "description: Ok."), ORIGIN)
    assert skill is not None and skill.name == "from-dir" and diagnostics == []


@pytest.mark.parametrize(("value", "expected"), [("true", True), ("yes", False), ("'true'", False), ("false", False)])
def test_disable_model_invocation_only_literal_true(tmp_path: Path, value: str, expected: bool) -> None:
    path = write_skill(tmp_path / "hidden", f"description: Ok.\ndisable-model-invocation: {value}")
    skill, _ = load_skill_file(path, ORIGIN)
    assert skill is not None and skill.disable_model_invocation is expected


def test_crlf_frontmatter(tmp_path: Path) -> None:
    (tmp_path / "crlf").mkdir()
    path = tmp_path / "crlf" / "SKILL.md"
    path.write_bytes(b"---\r\nname: crlf\r\ndescription: Windows file.\r\n---\r\nBody\r\n")
    skill, diagnostics = load_skill_file(path, ORIGIN)
    assert skill is not None and skill.description == "Windows file." and diagnostics == []


def test_non_string_description_is_a_clear_warning(tmp_path: Path) -> None:
    skill, diagnostics = load_skill_file(write_skill(tmp_path / "num", "description: 42"), ORIGIN)
    assert skill is None and messages(diagnostics) == ["description must be a string"]


# --- directory scanning -----------------------------------------------------------------------

def test_nested_skill_found_and_root_skill_preferred(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write_skill(root / "nested" / "child-skill", "description: Child.")
    write_skill(root / "root-skill-preferred", "description: Root skill should win.")
    write_skill(root / "root-skill-preferred" / "nested-child", "description: Hidden below a skill.")
    (root / "root-skill-preferred" / "notes.md").write_text("not a skill")
    files = collect_skill_files(root, "pi")
    assert [p.relative_to(root).as_posix() for p in files] == ["nested/child-skill/SKILL.md",
                                                              "root-skill-preferred/SKILL.md"]


def test_top_level_md_only_in_pi_dirs_and_dot_and_node_modules_skipped(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write_skill(root, "description: Loose.", filename="loose.md")
    write_skill(root / ".hidden", "description: Hidden.")
    write_skill(root / "node_modules" / "dep", "description: Dependency.")
    write_skill(root / "sub", "description: Not a skill file.", filename="other.md")
    assert [p.name for p in collect_skill_files(root, "pi")] == ["loose.md"]
    assert collect_skill_files(root, "agents") == []


def test_gitignore_inside_skill_tree_respected(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write_skill(root / "kept", "description: Kept.")
    write_skill(root / "ignored", "description: Ignored.")
    write_skill(root / "group" / "drop-me", "description: Ignored deeper.")
    write_skill(root / "group" / "keep-me", "description: Kept deeper.")
    (root / ".gitignore").write_text("ignored/\n")
    (root / "group" / ".ignore").write_text("drop-*\n")
    names = [p.parent.name for p in collect_skill_files(root, "pi")]
    assert names == ["keep-me", "kept"]


def test_symlinked_dir_followed_and_broken_link_skipped(tmp_path: Path) -> None:
    real = tmp_path / "elsewhere" / "linked"
    write_skill(real, "description: Through a link.")
    root = tmp_path / "skills"
    root.mkdir()
    (root / "linked").symlink_to(real, target_is_directory=True)
    (root / "broken").symlink_to(tmp_path / "missing")
    assert [p.parent.name for p in collect_skill_files(root, "pi")] == ["linked"]


def test_symlink_loop_terminates(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write_skill(root / "real-one", "description: Real.")
    (root / "group").mkdir()
    (root / "group" / "back").symlink_to(root, target_is_directory=True)
    (root / "group" / "again").symlink_to(root, target_is_directory=True)
    assert [p.parent.name for p in collect_skill_files(root, "pi")] == ["real-one"]


# --- discovery across locations ---------------------------------------------------------------

def test_discovery_locations_and_project_first(dirs: tuple[Path, Path], isolated_home: Path) -> None:
    cwd, agent = dirs
    write_skill(agent / "skills" / "user-skill", "description: User.")
    write_skill(agent / "skills" / "shared", "description: User copy.")
    write_skill(cwd / ".pi" / "skills" / "shared", "description: Project copy.")
    write_skill(cwd / ".agents" / "skills" / "cwd-agents", "description: In cwd.")
    write_skill(cwd.parent / ".agents" / "skills" / "repo-agents", "description: At the git root.")
    write_skill(cwd.parent.parent / ".agents" / "skills" / "outside-repo", "description: Above the git root.")
    write_skill(isolated_home / ".agents" / "skills" / "home-agents", "description: User-level agents dir.")
    write_skill(cwd / ".agents" / "skills", "description: Loose files are not skills here.", filename="loose.md")
    result = load_skills(cwd=cwd, agent_dir=agent)
    by_name = {s.name: s for s in result.skills}
    assert list(by_name) == ["shared", "cwd-agents", "repo-agents", "user-skill", "home-agents"]
    assert by_name["shared"].description == "Project copy."
    assert (by_name["shared"].source_info.source, by_name["shared"].source_info.scope) == ("auto", "project")
    assert by_name["shared"].source == "project"
    assert by_name["home-agents"].source_info.scope == "user"
    collision = [d for d in result.diagnostics if d.type == "collision"]
    assert len(collision) == 1 and collision[0].message == 'name "shared" collision'
    assert collision[0].collision is not None
    assert collision[0].collision.winner_path == cwd / ".pi" / "skills" / "shared" / "SKILL.md"
    assert collision[0].collision.loser_path == agent / "skills" / "shared" / "SKILL.md"


def test_agents_walk_reaches_filesystem_root_outside_git(tmp_path: Path) -> None:
    cwd = tmp_path / "nogit" / "deep"
    cwd.mkdir(parents=True)
    write_skill(tmp_path / ".agents" / "skills" / "high-up", "description: Far above.")
    names = [s.name for s in load_skills(cwd=cwd, agent_dir=tmp_path / "agent").skills]
    assert "high-up" in names


def test_explicit_paths_file_dir_missing_and_tilde(dirs: tuple[Path, Path], tmp_path: Path,
                                                   isolated_home: Path) -> None:
    cwd, agent = dirs
    file_skill = write_skill(tmp_path / "extra" / "one", "description: One.")
    write_skill(tmp_path / "bundle" / "two", "description: Two.")
    write_skill(isolated_home / "mine" / "three", "description: Three.")
    (tmp_path / "notes.txt").write_text("x")
    result = load_skills(cwd=cwd, agent_dir=agent, include_defaults=False,
                         skill_paths=[str(file_skill), str(tmp_path / "bundle"), "~/mine/three/SKILL.md",
                                      "missing-dir", str(tmp_path / "notes.txt")])
    assert [s.name for s in result.skills] == ["one", "two", "three"]
    assert all(s.source == "path" and s.source_info.source == "local" for s in result.skills)
    assert [(d.message, d.path) for d in result.diagnostics] == [
        ("skill path does not exist", cwd / "missing-dir"),
        ("skill path is not a markdown file", tmp_path / "notes.txt")]


def test_no_skills_keeps_explicit_paths(dirs: tuple[Path, Path], tmp_path: Path) -> None:
    cwd, agent = dirs
    write_skill(agent / "skills" / "auto-one", "description: Auto.")
    explicit = write_skill(tmp_path / "x" / "explicit-one", "description: Explicit.")
    res = load_resources(cwd, agent, no_skills=True, skill_paths=[str(explicit)])
    assert [s.name for s in res.skills] == ["explicit-one"]
    assert [s.name for s in load_resources(cwd, agent).skills] == ["auto-one"]


def test_same_file_through_symlink_loads_once_silently(dirs: tuple[Path, Path], tmp_path: Path) -> None:
    cwd, agent = dirs
    write_skill(agent / "skills" / "twin", "description: Twin.")
    (cwd / ".pi" / "skills").mkdir(parents=True)
    (cwd / ".pi" / "skills" / "twin").symlink_to(agent / "skills" / "twin", target_is_directory=True)
    result = load_skills(cwd=cwd, agent_dir=agent)
    assert [s.name for s in result.skills] == ["twin"] and result.diagnostics == []


def test_collision_keeps_first_explicit(tmp_path: Path) -> None:
    first = write_skill(tmp_path / "first" / "calendar", "description: First.")
    second = write_skill(tmp_path / "second" / "calendar", "description: Second.")
    result = load_skills(cwd=tmp_path, agent_dir=tmp_path / "agent", include_defaults=False,
                         skill_paths=[str(first.parent.parent), str(second.parent.parent)])
    assert [s.description for s in result.skills] == ["First."]
    assert [d.type for d in result.diagnostics] == ["collision"]


# --- prompt block and expansion ---------------------------------------------------------------

def test_prompt_block_escapes_and_hides(tmp_path: Path) -> None:
    special = write_skill(tmp_path / "special", "description: 'Uses <special> & \"characters\" isn''t it'")
    hidden = write_skill(tmp_path / "hidden", "description: Hidden.\ndisable-model-invocation: true")
    skills = load_skills(cwd=tmp_path, agent_dir=tmp_path / "a", include_defaults=False,
                         skill_paths=[str(special), str(hidden)]).skills
    block = format_skills_for_prompt(skills)
    assert "<description>Uses &lt;special&gt; &amp; &quot;characters&quot; isn&apos;t it</description>" in block
    assert "<name>hidden</name>" not in block
    assert block.startswith("\n\nThe following skills provide specialized instructions for specific tasks.\n")
    assert format_skills_for_prompt([s for s in skills if s.name == "hidden"]) == ""
    assert format_skills_for_prompt([]) == ""


def test_skill_command_expansion(tmp_path: Path) -> None:
    path = write_skill(tmp_path / "deploy", "description: Deploys.", body="  Run ./deploy.sh  \n\n")
    skills = load_skills(cwd=tmp_path, agent_dir=tmp_path / "a", include_defaults=False,
                         skill_paths=[str(path)]).skills
    block = (f'<skill name="deploy" location="{path}">\nReferences are relative to {path.parent}.\n\n'
             "Run ./deploy.sh\n</skill>")
    assert expand_skill_command("/skill:deploy", skills) == block
    assert expand_skill_command("/skill:deploy   to prod  ", skills) == block + "\n\nto prod"
    assert expand_skill_command("/skill:deploy    ", skills) == block
    assert expand_skill_command("/skill:unknown do it", skills) == "/skill:unknown do it"
    assert expand_skill_command("please /skill:deploy", skills) == "please /skill:deploy"


def test_hidden_skill_still_expands(tmp_path: Path) -> None:
    path = write_skill(tmp_path / "quiet", "description: Q.\ndisable-model-invocation: true", body="Secret steps")
    res = Resources(skills=load_skills(cwd=tmp_path, agent_dir=tmp_path / "a", include_defaults=False,
                                       skill_paths=[str(path)]).skills)
    assert "Secret steps\n</skill>" in expand_input("/skill:quiet", res)


def test_unreadable_skill_reports_error_and_keeps_text(tmp_path: Path) -> None:
    path = write_skill(tmp_path / "gone", "description: Soon gone.")
    skills = load_skills(cwd=tmp_path, agent_dir=tmp_path / "a", include_defaults=False,
                         skill_paths=[str(path)]).skills
    os.remove(path)
    errors: list[tuple[Path, str]] = []
    assert expand_input("/skill:gone now", Resources(skills=skills), on_error=lambda p, m: errors.append((p, m))) \
        == "/skill:gone now"
    assert len(errors) == 1 and errors[0][0] == path
