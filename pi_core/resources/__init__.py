"""What pi loads from disk besides plugins: context files, skills and prompt templates, and the
expansion of ``/skill:<name>`` and ``/<template>`` in user input (docs/config.md#resources).

Typical use::

    res = load_resources(cwd, agent_dir, skill_paths=opts.skill, template_paths=opts.prompt_template)
    for d in res.diagnostics: ...        # show at startup
    text = expand_input(user_text, res)  # before the text becomes a user message
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from pi_core.hookspecs.results import CommandInfo
from pi_core.resources.context_files import (
    ContextFile,
    Warn,
    discover_context_files,
    stderr_warning,
)
from pi_core.resources.diagnostics import Collision, Diagnostic, SourceInfo
from pi_core.resources.selection import ResourceSettings
from pi_core.resources.skills import (
    Skill,
    expand_skill_command,
    format_skills_for_prompt,
    load_skills,
)
from pi_core.resources.templates import PromptTemplate, expand_template, load_templates

__all__ = [
    "Collision", "ContextFile", "Diagnostic", "PromptTemplate", "ResourceSettings", "Resources", "Skill", "SourceInfo",
    "expand_input", "format_skills_for_prompt", "load_resources",
]


@dataclass(eq=False, repr=False)
class Resources:
    """What a session loaded besides plugins: context files, skills, prompt templates, their problems."""

    context_files: list[ContextFile] = field(default_factory=list)
    skills: list[Skill] = field(default_factory=list)
    templates: list[PromptTemplate] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)  # skills first, then templates
    skill_commands: bool = True  # ``enableSkillCommands``: skills answer ``/skill:name`` (and are listed so)

    def skill(self, name: str) -> Skill | None:
        return next((s for s in self.skills if s.name == name), None)

    def template(self, name: str) -> PromptTemplate | None:
        return next((t for t in self.templates if t.name == name), None)

    def command_infos(self) -> list[CommandInfo]:
        """The templates, then the skills, as ``get_commands`` lists them after the plugins' commands."""
        return [*(CommandInfo(t.name, t.description, "prompt", t.source_info.to_json()) for t in self.templates),
                *(CommandInfo(f"skill:{s.name}", s.description, "skill", s.source_info.to_json())
                  for s in self.skills if self.skill_commands)]


def load_resources(
    cwd: Path,
    agent_dir: Path,
    *,
    no_context_files: bool = False,
    no_skills: bool = False,
    skill_paths: Iterable[str] = (),
    no_prompt_templates: bool = False,
    template_paths: Iterable[str] = (),
    settings: ResourceSettings | None = None,
    warn: Warn = stderr_warning,
    project: bool = True,
) -> Resources:
    """Load everything for one session. ``no_skills`` / ``no_prompt_templates`` turn off discovery
    but keep the explicit paths (``--skill``, ``--prompt-template``). ``settings`` carries the
    ``skills`` / ``prompts`` arrays of both settings scopes
    (``ResourceSettings.from_scopes(settings.scope_data("global"), settings.scope_data("project"))``). Unreadable context files are
    reported through ``warn`` at once (Pi prints them in every mode); the rest goes to ``diagnostics``.
    ``project=False`` (an untrusted project, docs/config.md#project-trust) skips the project's skills and
    templates; context files load either way.
    """
    skills = load_skills(cwd=cwd, agent_dir=agent_dir, skill_paths=list(skill_paths),
                         include_defaults=not no_skills, settings=settings, project=project)
    templates = load_templates(cwd=cwd, agent_dir=agent_dir, template_paths=list(template_paths),
                               include_defaults=not no_prompt_templates, settings=settings, project=project)
    return Resources(
        context_files=discover_context_files(cwd, agent_dir, no_context_files=no_context_files, warn=warn),
        skills=skills.skills,
        templates=templates.templates,
        diagnostics=skills.diagnostics + templates.diagnostics,
    )


def _report_skill_error(path: Path, message: str) -> None:
    print(f"Extension error ({path}): {message}", file=sys.stderr)


def expand_input(
    text: str, resources: Resources, *, on_error: Callable[[Path, str], None] = _report_skill_error
) -> str:
    """Input pipeline step 3: ``/skill:<name> [args]`` expansion, then ``/<template> [args]``.

    Unknown names leave the text as typed. A skill file that can no longer be read is reported
    through ``on_error(path, message)`` (the host turns it into an extension error event).
    """
    expanded = expand_skill_command(text, resources.skills, on_error) if resources.skill_commands else text
    return expand_template(expanded, resources.templates)
