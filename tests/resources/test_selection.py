"""Settings ``skills`` / ``prompts`` entries, override patterns and precedence (docs/config.md#resources)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pi_core.resources import ResourceSettings, load_resources
from pi_core.resources.selection import apply_patterns, enabled_by_overrides


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    return home


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    cwd, agent = tmp_path / "proj", tmp_path / "agent"
    (cwd / ".git").mkdir(parents=True)
    agent.mkdir()
    return cwd, agent


def skill(directory: Path, description: str = "Something.") -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "SKILL.md"
    path.write_text(f"---\ndescription: {description}\n---\nbody")
    return path


def settings(project: dict[str, list[str]] | None = None, user: dict[str, list[str]] | None = None) -> ResourceSettings:
    return ResourceSettings.from_scopes(user or {}, project or {})


def test_from_scopes_keeps_only_resource_arrays() -> None:
    s = ResourceSettings.from_scopes({"skills": ["a"], "theme": "dark", "prompts": "oops"}, {"prompts": ["p"]})
    assert s.entries("user", "skills") == ["a"] and s.entries("user", "prompts") == []
    assert s.entries("project", "prompts") == ["p"]


def test_settings_entries_load_and_rank(dirs: tuple[Path, Path], tmp_path: Path) -> None:
    cwd, agent = dirs
    skill(cwd / ".pi" / "vendor" / "project-entry")
    skill(agent / "extra" / "user-entry")
    skill(cwd / ".pi" / "skills" / "project-auto")
    skill(agent / "skills" / "user-auto")
    res = load_resources(cwd, agent, no_context_files=True,
                         settings=settings({"skills": ["vendor"]}, {"skills": ["extra"]}))
    assert [s.name for s in res.skills] == ["project-entry", "project-auto", "user-entry", "user-auto"]
    info = {s.name: (s.source_info.source, s.source_info.scope) for s in res.skills}
    assert info == {"project-entry": ("local", "project"), "project-auto": ("auto", "project"),
                    "user-entry": ("local", "user"), "user-auto": ("auto", "user")}


def test_user_entry_beats_user_discovery_on_collision(dirs: tuple[Path, Path]) -> None:
    cwd, agent = dirs
    skill(agent / "pinned" / "tool", "Pinned copy.")
    skill(agent / "skills" / "tool", "Discovered copy.")
    res = load_resources(cwd, agent, no_context_files=True, settings=settings(user={"skills": ["pinned"]}))
    assert [s.description for s in res.skills] == ["Pinned copy."]
    assert [d.type for d in res.diagnostics] == ["collision"]


def test_overrides_toggle_discovered_skills(dirs: tuple[Path, Path]) -> None:
    cwd, agent = dirs
    for name in ("alpha", "beta", "gamma"):
        skill(agent / "skills" / name)

    def names(entries: list[str]) -> list[str]:
        res = load_resources(cwd, agent, no_context_files=True, settings=settings(user={"skills": entries}))
        return [s.name for s in res.skills]

    assert names([]) == ["alpha", "beta", "gamma"]
    assert names(["!beta"]) == ["alpha", "gamma"]
    assert names(["!skills/*"]) == []
    assert names(["!*", "+skills/gamma"]) == ["gamma"]
    assert names(["-skills/alpha/SKILL.md"]) == ["beta", "gamma"]
    assert names(["+skills/alpha", "-skills/alpha"]) == ["beta", "gamma"]


def test_prompt_entries_recursive_with_patterns(dirs: tuple[Path, Path]) -> None:
    cwd, agent = dirs
    lib = cwd / ".pi" / "lib"
    (lib / "deep").mkdir(parents=True)
    (lib / "keep.md").write_text("keep")
    (lib / "deep" / "nested.md").write_text("nested")
    (lib / "drop.md").write_text("drop")
    (lib / "notes.txt").write_text("not a template")
    res = load_resources(cwd, agent, no_context_files=True,
                         settings=settings({"prompts": ["lib", "!**/drop.md"]}))
    assert sorted(t.name for t in res.templates) == ["keep", "nested"]
    res = load_resources(cwd, agent, no_context_files=True, settings=settings({"prompts": ["lib", "lib/k*"]}))
    assert [t.name for t in res.templates] == ["keep"]


def test_no_flags_ignore_settings_entries(dirs: tuple[Path, Path]) -> None:
    cwd, agent = dirs
    skill(cwd / ".pi" / "vendor" / "project-entry")
    (cwd / ".pi" / "p.md").write_text("p")
    res = load_resources(cwd, agent, no_context_files=True, no_skills=True, no_prompt_templates=True,
                         settings=settings({"skills": ["vendor"], "prompts": ["p.md"]}))
    assert res.skills == [] and res.templates == []


def test_pattern_order_of_application(tmp_path: Path) -> None:
    base = tmp_path
    paths = [base / "a.md", base / "b.md", base / "sub" / "c.md"]
    assert apply_patterns(paths, [], base) == set(paths)
    assert apply_patterns(paths, ["*.md"], base) == set(paths)  # the bare name matches too
    assert apply_patterns(paths, ["sub/*"], base) == {paths[2]}
    assert apply_patterns(paths, ["sub/*", "!c.md", "+a.md"], base) == {paths[0]}
    assert apply_patterns(paths, ["+a.md", "-a.md"], base) == {paths[1], paths[2]}
    assert apply_patterns(paths, ["+./sub/c.md", "!**"], base) == {paths[2]}
    assert enabled_by_overrides(paths[0], ["*.md"], base)  # plain includes do not toggle discovered files
