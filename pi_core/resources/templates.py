"""Prompt templates: ``<name>.md`` files that ``/<name> args`` expands, with ``$1``, ``$@``,
``$ARGUMENTS`` and ``${@:N:L}`` filled from the arguments (never re-scanning inserted values).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from pi_core.resources.diagnostics import Diagnostic, FirstByName, Scope, SourceInfo

# isort: split
from pi_core.resources.diagnostics import canonical, expand_user_path, is_under
from pi_core.resources.selection import ResourceSettings, scoped_candidates

DESCRIPTION_FALLBACK_CHARS = 60


@dataclass(frozen=True)
class PromptTemplate:
    """A prompt template: its name, description and text."""

    name: str
    description: str
    content: str
    file_path: Path
    source_info: SourceInfo
    argument_hint: str | None = None


def parse_command_args(text: str) -> list[str]:
    """Split like a shell, but only on spaces and tabs, with '...' and "..." grouping and no escapes.

    Empty quotes add nothing on their own (``'' " "`` → ``[" "]``).
    """
    args: list[str] = []
    current = ""
    quote: str | None = None
    for char in text:
        if quote:
            if char == quote:
                quote = None
            else:
                current += char
        elif char in ("'", '"'):
            quote = char
        elif char in (" ", "\t"):
            if current:
                args.append(current)
                current = ""
        else:
            current += char
    if current:
        args.append(current)
    return args


# One pass over the template text: a value inserted for one placeholder is never scanned again. Compiled by re
# on first use (a run that expands no template never compiles it).
_PLACEHOLDER = r"\$\{@:(?P<start>\d+)(?::(?P<count>\d+))?\}|\$(?P<index>\d+)|\$ARGUMENTS|\$@"


def substitute_args(content: str, args: list[str]) -> str:
    """Fill the placeholders: ``$N`` (``$0`` and missing → ""), ``${@:N}`` / ``${@:N:L}`` (1-based;
    0 counts as 1), ``$ARGUMENTS`` and ``$@`` (all, space-joined). Case-sensitive; nothing else is
    special. Same result as Pi's ordered passes ($N, slices, $ARGUMENTS, $@), minus their re-scan."""

    def replace(match: re.Match[str]) -> str:
        if match.group("index") is not None:
            index = int(match.group("index")) - 1
            return args[index] if 0 <= index < len(args) else ""
        if match.group("start") is not None:
            start = max(int(match.group("start")) - 1, 0)
            if match.group("count") is not None:
                return " ".join(args[start : start + int(match.group("count"))])
            return " ".join(args[start:])
        return " ".join(args)

    return re.sub(_PLACEHOLDER, replace, content)


def expand_template(text: str, templates: Iterable[PromptTemplate]) -> str:
    """``/<name> args`` → the template with arguments filled in; anything else comes back unchanged."""
    if not text.startswith("/"):
        return text
    space = text.find(" ")
    name = text[1:] if space == -1 else text[1:space]
    template = next((t for t in templates if t.name == name), None)
    if template is None:
        return text
    return substitute_args(template.content, parse_command_args("" if space == -1 else text[space + 1 :]))


def load_template_file(path: Path, source_info: SourceInfo) -> PromptTemplate:
    """Read one template; raises OSError or FrontmatterError (the caller skips the file)."""
    # Imported here: a run without template files never loads the YAML parser.
    from pi_core.resources.frontmatter import parse_frontmatter

    frontmatter, body = parse_frontmatter(path.read_text(encoding="utf-8", errors="replace"))
    description = frontmatter.get("description") or ""
    description = description if isinstance(description, str) else str(description)
    if not description:
        first = next((line for line in body.split("\n") if line.strip()), None)
        if first is not None:
            description = first[:DESCRIPTION_FALLBACK_CHARS] + ("..." if len(first) > DESCRIPTION_FALLBACK_CHARS else "")
    hint = frontmatter.get("argument-hint")
    return PromptTemplate(
        name=path.name.removesuffix(".md"),
        description=description,
        content=body,
        file_path=path,
        source_info=source_info,
        argument_hint=str(hint) if hint else None,
    )


def collect_template_files(directory: Path) -> list[Path]:
    """Direct ``*.md`` files of ``directory`` (no recursion; dot-names and ignored files skipped)."""
    if not directory.is_dir():
        return []
    from pi_core.resources.ignore import IgnoreMatcher

    ignore = IgnoreMatcher(directory)
    ignore.add_dir(directory)
    found = []
    try:
        entries = sorted(os.scandir(directory), key=lambda e: e.name)
    except OSError:
        return []
    for entry in entries:
        if entry.name.startswith(".") or entry.name == "node_modules" or not entry.name.endswith(".md"):
            continue
        try:
            is_file = entry.is_file()
        except OSError:
            continue  # broken symlink
        if is_file and not ignore.ignores(entry.name, False):
            found.append(Path(entry.path))
    return found


def collect_markdown_tree(directory: Path) -> list[Path]:
    """Every ``*.md`` below ``directory`` (a settings entry naming a folder is searched recursively)."""
    from pi_core.resources.ignore import IgnoreMatcher

    found: list[Path] = []
    ignore = IgnoreMatcher(directory)
    visited: set[str] = set()

    def walk(current: Path) -> None:
        if canonical(current) in visited:
            return  # symlink cycle
        visited.add(canonical(current))
        ignore.add_dir(current)
        try:
            entries = sorted(os.scandir(current), key=lambda e: e.name)
        except OSError:
            return
        for entry in entries:
            if entry.name.startswith(".") or entry.name == "node_modules":
                continue
            rel = Path(entry.path).relative_to(directory).as_posix()
            try:
                is_dir, is_file = entry.is_dir(), entry.is_file()
            except OSError:
                continue  # broken symlink
            if is_dir and not ignore.ignores(rel, True):
                walk(Path(entry.path))
            elif is_file and entry.name.endswith(".md") and not ignore.ignores(rel, False):
                found.append(Path(entry.path))

    walk(directory)
    return found


@dataclass(eq=False, repr=False)
class TemplateSet:
    """The prompt templates loaded, and what was wrong with the files."""

    templates: list[PromptTemplate]
    diagnostics: list[Diagnostic]


def load_templates(*, cwd: Path, agent_dir: Path, template_paths: Iterable[str] = (), include_defaults: bool = True,
                   settings: ResourceSettings | None = None, project: bool = True) -> TemplateSet:
    """Templates in precedence order: project settings entries, ``.pi/prompts``, user settings
    entries, ``<agent_dir>/prompts``, then explicit paths (files or directories).
    ``include_defaults=False`` (``--no-prompt-templates``) keeps only the explicit paths.
    First name wins; later ones get a "collision" diagnostic. ``project=False`` (an untrusted project)
    skips the project's entries and ``.pi/prompts``."""
    cwd = Path(os.path.abspath(cwd))
    project_base, user_base = cwd / ".pi", Path(agent_dir)
    project_dir, user_dir = project_base / "prompts", user_base / "prompts"
    kept: FirstByName[PromptTemplate] = FirstByName("prompt", "/{}")
    diagnostics = kept.diagnostics

    def add(path: Path, info: SourceInfo) -> None:
        from pi_core.resources.frontmatter import FrontmatterError

        if not kept.first_visit(path):
            return
        try:
            kept.keep(load_template_file(path, info), path)
        except (OSError, FrontmatterError) as err:
            diagnostics.append(Diagnostic("warning", f"prompt template skipped: {err}", path))

    if include_defaults:
        for c in scoped_candidates(settings or ResourceSettings(), "prompts", collect_markdown_tree,
                                   (project_base, collect_template_files(project_dir)) if project else None,
                                   (user_base, collect_template_files(user_dir))):
            add(c.path, SourceInfo(c.path, c.source, c.scope, base_dir=c.base_dir))

    for raw in template_paths:
        path = expand_user_path(raw, cwd)
        if not path.exists():
            diagnostics.append(Diagnostic("error", "Prompt template path does not exist", path))
            continue
        files = collect_template_files(path) if path.is_dir() else [path] if path.name.endswith(".md") else []
        if not files and not path.is_dir():
            diagnostics.append(Diagnostic("warning", "prompt template path is not a markdown file", path))
        for found in files:
            scope: Scope = ("user" if is_under(found, user_dir) else "project" if is_under(found, project_dir)
                            else "temporary")
            base = path if path.is_dir() else path.parent
            add(found, SourceInfo(found, "local", scope, base_dir=base))
    return TemplateSet(*kept.found())
