"""Skills: SKILL.md files with YAML frontmatter, found in the skill dirs, listed in the system prompt
(while ``read`` is active) and expanded by ``/skill:<name> [args]``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pi_core.resources.diagnostics import Diagnostic, FirstByName, Scope, SourceInfo

# isort: split
from pi_core.resources.diagnostics import canonical, expand_user_path, is_under
from pi_core.resources.selection import Candidate, ResourceSettings, scoped_candidates

if TYPE_CHECKING:
    from pi_core.resources.ignore import IgnoreMatcher

MAX_NAME_LENGTH = 64
MAX_DESCRIPTION_LENGTH = 1024
_NAME_CHARS = r"[a-z0-9-]+"  # compiled by re when the first skill is checked

ScanMode = Literal["pi", "agents"]  # "pi" dirs also take top-level *.md files as skills


@dataclass(frozen=True)
class Skill:
    """A skill: its name, description and SKILL.md file."""

    name: str
    description: str
    file_path: Path
    base_dir: Path  # directory of the skill file: relative references resolve against it
    source_info: SourceInfo
    disable_model_invocation: bool = False

    @property
    def source(self) -> str:
        """Short provenance: "user", "project" or "path" (an explicit ``--skill`` path)."""
        return {"user": "user", "project": "project"}.get(self.source_info.scope, "path")


@dataclass(frozen=True, repr=False)
class SkillOrigin:
    """How a found skill file is labelled: where it was discovered and under which scope."""

    source: str
    scope: Scope
    base_dir: Path | None = None  # None: the skill's own directory


def validate_name(name: str, parent_dir_name: str) -> list[str]:
    errors = []
    if name != parent_dir_name:
        errors.append(f'name "{name}" does not match parent directory "{parent_dir_name}"')
    if len(name) > MAX_NAME_LENGTH:
        errors.append(f"name exceeds {MAX_NAME_LENGTH} characters ({len(name)})")
    if not re.fullmatch(_NAME_CHARS, name):
        errors.append("name contains invalid characters (must be lowercase a-z, 0-9, hyphens only)")
    if name.startswith("-") or name.endswith("-"):
        errors.append("name must not start or end with a hyphen")
    if "--" in name:
        errors.append("name must not contain consecutive hyphens")
    return errors


def load_skill_file(path: Path, origin: SkillOrigin) -> tuple[Skill | None, list[Diagnostic]]:
    """Parse one skill file. Name problems are warnings (the skill still loads); a missing
    description, invalid YAML or an unreadable file is a warning and the skill is skipped."""
    # Imported here: a run without skill files never loads the YAML parser.
    from pi_core.resources.frontmatter import FrontmatterError, parse_frontmatter

    diagnostics: list[Diagnostic] = []

    def warn(message: str) -> None:
        diagnostics.append(Diagnostic("warning", message, path))

    try:
        frontmatter, _ = parse_frontmatter(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, FrontmatterError) as err:
        warn(str(err))
        return None, diagnostics
    skill_dir = path.parent
    description = frontmatter.get("description")
    if description is not None and not isinstance(description, str):
        warn("description must be a string")
        return None, diagnostics
    if not description or not description.strip():
        warn("description is required")
    elif len(description) > MAX_DESCRIPTION_LENGTH:
        warn(f"description exceeds {MAX_DESCRIPTION_LENGTH} characters ({len(description)})")
    name = frontmatter.get("name") or skill_dir.name
    if not isinstance(name, str):
        warn("name must be a string")
        return None, diagnostics
    for message in validate_name(name, skill_dir.name):
        warn(message)
    if not description or not description.strip():
        return None, diagnostics
    info = SourceInfo(path, origin.source, origin.scope, base_dir=origin.base_dir or skill_dir)
    return Skill(name=name, description=description, file_path=path, base_dir=skill_dir, source_info=info,
                 disable_model_invocation=frontmatter.get("disable-model-invocation") is True), diagnostics


def collect_skill_files(root: Path, mode: ScanMode) -> list[Path]:
    """Skill files under ``root``: a directory holding SKILL.md is one skill and is not searched
    further; other directories are searched recursively; top-level ``*.md`` files count in "pi" mode.
    Names starting with "." and ``node_modules`` are skipped; ignore files inside the tree apply."""
    if not root.is_dir():
        return []
    from pi_core.resources.ignore import IgnoreMatcher

    found: list[Path] = []
    _walk(root, root, mode, IgnoreMatcher(root), found, set())
    return found


def _walk(directory: Path, root: Path, mode: ScanMode, ignore: IgnoreMatcher, found: list[Path],
          visited: set[str]) -> None:
    real = canonical(directory)
    if real in visited:
        return  # a symlink back into the tree: searching it again would never end
    visited.add(real)
    ignore.add_dir(directory)
    try:
        entries = sorted(os.scandir(directory), key=lambda e: e.name)
    except OSError:
        return  # unreadable directory: nothing to find there
    rel_dir = directory.relative_to(root).as_posix()
    prefix = "" if rel_dir == "." else rel_dir + "/"
    for entry in entries:
        if entry.name == "SKILL.md" and _kind(entry) == "file" and not ignore.ignores(prefix + entry.name, False):
            found.append(Path(entry.path))
            return
    for entry in entries:
        if entry.name.startswith(".") or entry.name == "node_modules":
            continue
        kind = _kind(entry)
        rel = prefix + entry.name
        if kind == "dir" and not ignore.ignores(rel, True):
            _walk(Path(entry.path), root, mode, ignore, found, visited)
        elif (kind == "file" and mode == "pi" and directory == root and entry.name.endswith(".md")
              and not ignore.ignores(rel, False)):
            found.append(Path(entry.path))


def _kind(entry: os.DirEntry[str]) -> str | None:
    """"file", "dir" or None; symlinks are followed and broken ones give None."""
    try:
        if entry.is_dir():
            return "dir"
        if entry.is_file():
            return "file"
    except OSError:
        return None
    return None


def ancestor_agents_skill_dirs(cwd: Path, home: Path) -> list[Path]:
    """``.agents/skills`` in cwd and each ancestor up to the git root (or filesystem root), cwd first.
    ``~/.agents/skills`` is left out: it belongs to the user scope."""
    start = Path(os.path.abspath(cwd))
    git_root = next((d for d in (start, *start.parents) if (d / ".git").exists()), None)
    user_dir = os.path.normpath(home / ".agents" / "skills")
    dirs = []
    for directory in (start, *start.parents):
        candidate = directory / ".agents" / "skills"
        if os.path.normpath(candidate) != user_dir:
            dirs.append(candidate)
        if directory == git_root:
            break
    return dirs


@dataclass(eq=False, repr=False)
class SkillSet:
    """The skills loaded, and what was wrong with the files."""

    skills: list[Skill]
    diagnostics: list[Diagnostic]


def load_skills(*, cwd: Path, agent_dir: Path, home: Path | None = None, skill_paths: Iterable[str] = (),
                include_defaults: bool = True, settings: ResourceSettings | None = None, project: bool = True) -> SkillSet:
    """Skills in precedence order: project settings entries, project discovery (``.pi/skills``,
    ``.agents/skills`` walk), user settings entries, user discovery (agent dir, ``~/.agents/skills``),
    then explicit ``--skill`` paths. ``include_defaults=False`` (``--no-skills``) keeps only the
    explicit paths. ``project=False`` (an untrusted project) skips the project's settings entries and
    discovery; explicit paths still load.

    On a name collision the first skill wins and the later one gets a "collision" diagnostic; the
    same file reached twice (symlinks, overlapping dirs) loads once, silently.
    """
    home = home or Path.home()
    cwd = Path(os.path.abspath(cwd))
    project_base, user_base = cwd / ".pi", Path(agent_dir)
    kept: FirstByName[Skill] = FirstByName("skill")
    diagnostics = kept.diagnostics

    def add(path: Path, origin: SkillOrigin) -> None:
        if not kept.first_visit(path):
            return
        skill, problems = load_skill_file(path, origin)
        diagnostics.extend(problems)
        if skill is not None:
            kept.keep(skill, path)

    if include_defaults:
        for candidate in _default_candidates(cwd, project_base, user_base, home, settings or ResourceSettings(),
                                             project):
            base = candidate.base_dir if candidate.source == "auto" else None
            add(candidate.path, SkillOrigin(candidate.source, candidate.scope, base))

    for raw in skill_paths:
        path = expand_user_path(raw, cwd)
        origin = _explicit_origin(path, user_base / "skills", project_base / "skills")
        if not path.exists():
            diagnostics.append(Diagnostic("warning", "skill path does not exist", path))
        elif path.is_dir():
            for found in collect_skill_files(path, "pi"):
                add(found, origin)
        elif path.is_file() and path.name.endswith(".md"):
            add(path, origin)
        else:
            diagnostics.append(Diagnostic("warning", "skill path is not a markdown file", path))
    return SkillSet(*kept.found())


def _default_candidates(cwd: Path, project_base: Path, user_base: Path, home: Path,
                        settings: ResourceSettings, project: bool) -> list[Candidate]:
    def pi_dir(directory: Path) -> list[Path]:
        return collect_skill_files(directory, "pi")

    project_auto = pi_dir(project_base / "skills") + [
        f for d in ancestor_agents_skill_dirs(cwd, home) for f in collect_skill_files(d, "agents")] if project else []
    user_auto = pi_dir(user_base / "skills") + collect_skill_files(home / ".agents" / "skills", "agents")
    return scoped_candidates(settings, "skills", pi_dir, (project_base, project_auto) if project else None,
                             (user_base, user_auto))


def _explicit_origin(path: Path, user_skills: Path, project_skills: Path) -> SkillOrigin:
    if is_under(path, user_skills):
        return SkillOrigin("local", "user")
    if is_under(path, project_skills):
        return SkillOrigin("local", "project")
    return SkillOrigin("local", "temporary")


def escape_xml(text: str) -> str:
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;").replace("'", "&apos;"))


def format_skills_for_prompt(skills: Iterable[Skill]) -> str:
    """The system-prompt skills block (starting with a blank line), or "" when no skill is visible."""
    visible = [s for s in skills if not s.disable_model_invocation]
    if not visible:
        return ""
    lines = [
        "\n\nThe following skills provide specialized instructions for specific tasks.",
        "Use the read tool to load a skill's file when the task matches its description.",
        ("When a skill file references a relative path, resolve it against the skill directory "
        "(parent of SKILL.md / dirname of the path) and use that absolute path in tool commands."),
        "",
        "<available_skills>",
    ]
    for skill in visible:
        lines += [
            "  <skill>",
            f"    <name>{escape_xml(skill.name)}</name>",
            f"    <description>{escape_xml(skill.description)}</description>",
            f"    <location>{escape_xml(str(skill.file_path))}</location>",
            "  </skill>",
        ]
    lines.append("</available_skills>")
    return "\n".join(lines)


SkillErrorHandler = Callable[[Path, str], None]


def expand_skill_command(text: str, skills: Iterable[Skill], on_error: SkillErrorHandler | None = None) -> str:
    """``/skill:<name> [args]`` → the skill's body wrapped in a ``<skill>`` block, then the args.

    An unknown name leaves the text unchanged. If the file cannot be read any more, ``on_error``
    gets (skill file, message) and the text is left unchanged.
    """
    if not text.startswith("/skill:"):
        return text
    space = text.find(" ")
    name = text[7:] if space == -1 else text[7:space]
    args = "" if space == -1 else text[space + 1 :].strip()
    skill = next((s for s in skills if s.name == name), None)
    if skill is None:
        return text
    from pi_core.resources.frontmatter import FrontmatterError, strip_frontmatter

    try:
        body = strip_frontmatter(skill.file_path.read_text(encoding="utf-8", errors="replace")).strip()
    except (OSError, FrontmatterError) as err:
        if on_error is not None:
            on_error(skill.file_path, str(err))
        return text
    block = (f'<skill name="{skill.name}" location="{skill.file_path}">\n'
             f"References are relative to {skill.base_dir}.\n\n{body}\n</skill>")
    return f"{block}\n\n{args}" if args else block
