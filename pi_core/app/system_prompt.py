"""Compose the system prompt: base text (built-in, SYSTEM.md or ``--system-prompt``), the active
tools' snippets and guidelines (plugins add theirs through hooks), the append text, context files,
skills, date and cwd (docs/config.md#system-prompt).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, NotRequired, TypedDict, Unpack

from pi_core.config_paths import docs_root
from pi_core.resources.context_files import (
    ContextFile,
    Warn,
    read_verbatim,
    stderr_warning,
)
from pi_core.resources.skills import Skill, format_skills_for_prompt

if TYPE_CHECKING:
    from pi_core.loader.plugins import PluginSet
    from pi_core.tools import Tool

INTRO = (
    "You are an expert coding assistant working inside pi, a coding agent harness. You help users "
    "by reading files, running commands, editing code and writing new files."
)
MORE_TOOLS = "In addition to the tools above, you may have access to other custom tools depending on the project."
BASH_EXPLORATION = "Use bash for file operations like ls, rg, find"
PREFER_EXPLORATION_TOOLS = "Prefer grep/find/ls tools over bash for file exploration (faster, respects .gitignore)"
ALWAYS_GUIDELINES = ("Be concise in your responses", "Show file paths clearly when working with files")
EXPLORATION_TOOLS = frozenset({"grep", "find", "ls"})

def docs_block(root: Path | None = None) -> str:
    """Where the model finds pi's own documentation (only worth reading when asked about pi): files that
    exist in a wheel install too (``config_paths.docs_root``)."""
    root = root if root is not None else docs_root()
    return "\n".join([
        ("pi documentation (read it only when the user asks about pi itself: its plugins, hooks, tools, "
        "providers, skills, prompt templates or configuration):"),
        f"- Overview, usage and configuration: {root / 'README.md'}",
        f"- Writing plugins (hook specifications, tools, providers, renderers): {root / 'CONTRIBUTING.md'}",
        f"- Behaviour reference (CLI, RPC, settings, models, sessions, tools): {root / 'docs' / 'README.md'}",
        "- Read these files completely and follow their cross-references before building on pi",
    ])


def _one_line(text: str | None) -> str:
    return " ".join((text or "").split())


def _guidelines(tools: Sequence[Tool], extra: Iterable[str]) -> list[str]:
    names = {tool.name for tool in tools}
    bullets: list[str] = []
    if "bash" in names:
        bullets.append(PREFER_EXPLORATION_TOOLS if names & EXPLORATION_TOOLS else BASH_EXPLORATION)
    for tool in tools:
        bullets.extend(tool.prompt_guidelines)
    bullets.extend(extra)
    bullets.extend(ALWAYS_GUIDELINES)
    unique: dict[str, None] = {}
    for bullet in bullets:
        if bullet.strip():
            unique.setdefault(bullet.strip(), None)
    return list(unique)


def _tool_section(tools: Sequence[Tool], extra_snippets: Iterable[str]) -> str:
    lines = [f"- {tool.name}: {_one_line(tool.prompt_snippet)}" for tool in tools if _one_line(tool.prompt_snippet)]
    lines += [snippet.strip() for snippet in extra_snippets if snippet.strip()]
    return "\n".join(lines) if lines else "(none)"


class PromptInputs(TypedDict):
    """What the prompt is made of: ``prompt_parts``' keywords, and ``build_system_prompt``'s besides ``agent_dir``."""

    tools: Sequence[Tool]
    cwd: Path
    custom_prompt: str | None
    append_prompts: Sequence[str]
    context_files: Sequence[ContextFile]
    skills: Sequence[Skill]
    extra_snippets: NotRequired[Iterable[str]]
    extra_guidelines: NotRequired[Iterable[str]]
    now: NotRequired[date | None]


def build_system_prompt(*, agent_dir: Path, **inputs: Unpack[PromptInputs]) -> str:
    """The full system prompt. ``tools`` are the active tools in activation order; ``custom_prompt``
    (SYSTEM.md or ``--system-prompt`` text) replaces the intro, tool list, guidelines and docs block.
    ``agent_dir`` is accepted for symmetry with the loaders; the texts arrive already resolved.
    """
    del agent_dir
    return "".join(separator + text for _name, separator, text in prompt_parts(**inputs))


PromptPart = tuple[str, str, str]  # (section name, separator before it, text)


def prompt_parts(
    *,
    tools: Sequence[Tool],
    cwd: Path,
    custom_prompt: str | None,
    append_prompts: Sequence[str],
    context_files: Sequence[ContextFile],
    skills: Sequence[Skill],
    extra_snippets: Iterable[str] = (),
    extra_guidelines: Iterable[str] = (),
    now: date | None = None,
) -> list[PromptPart]:
    """The prompt as named parts (Pi 1.6.0's section names where one fits): joined with their separators they
    are ``build_system_prompt``'s text, and the JSON/RPC ``system`` message lists them as its ``sections``."""
    if custom_prompt:
        parts: list[PromptPart] = [("preamble", "", custom_prompt)]
    else:
        guidelines = "\n".join(f"- {g}" for g in _guidelines(tools, extra_guidelines))
        parts = [("preamble", "", INTRO),
                 ("tools", "\n\n", f"Available tools:\n{_tool_section(tools, extra_snippets)}\n\n{MORE_TOOLS}"),
                 ("rules", "\n\n", f"Guidelines:\n{guidelines}"),
                 ("docs", "\n\n", docs_block())]
    append = "\n\n".join(append_prompts)
    if append:
        parts.append(("addendum", "\n\n", append))
    if context_files:
        parts.append(("project_context", "\n\n", "# Project Context\n\nProject-specific instructions and guidelines:\n\n"
                      + "".join(f"## {f.path}\n\n{f.content}\n\n" for f in context_files)))
    if any(tool.name == "read" for tool in tools):
        skills_text = format_skills_for_prompt(skills)
        if skills_text:
            parts.append(("skills", "", skills_text))
    today = now or date.today()  # local date, no time: keeps the prompt prefix cacheable all day
    parts.append(("date", "\n", f"Current date: {today.isoformat()}"))
    parts.append(("cwd", "\n", f"Current working directory: {str(cwd).replace(chr(92), '/')}"))
    return parts


def part_sections(parts: Iterable[PromptPart]) -> dict[str, str]:
    """Section name -> its text without the blank lines around it."""
    return {name: text.strip("\n") for name, _separator, text in parts}


def gather_prompt_hooks(plugins: PluginSet, active: frozenset[str]) -> tuple[list[str], list[str]]:
    """(snippets, guidelines) that plugins add through ``pi_prompt_snippets`` / ``pi_prompt_guidelines``
    for the active tool set, lowest layer first. A hook returning the wrong type is recorded in
    ``plugins.failures`` and ignored, like one that raises."""
    from pi_core.loader.plugins import PluginFailure

    def strings(hook: str) -> list[str]:
        out: list[str] = []
        for plugin_name, value in plugins.call_sync(hook, active_tools=active):
            items = [value] if isinstance(value, str) else value
            if not isinstance(items, (list, tuple)) or not all(isinstance(i, str) for i in items):
                plugins.failures.append(PluginFailure(
                    plugin_name, hook, f"{hook} returned {type(value).__name__}; expected a string or a list of strings"))
                continue
            out.extend(items)
        return out

    return strings("pi_prompt_snippets"), strings("pi_prompt_guidelines")


def render_sections(sections: dict[str, str]) -> str:
    """Plugin sections (``SystemPromptOptions.sections``) as ``<name>`` blocks after pi's prompt."""
    return "".join(separator + text for _name, separator, text in plugin_parts(sections))


def plugin_parts(sections: dict[str, str]) -> list[PromptPart]:
    """Plugin sections as prompt parts. A name must be an identifier and not "preamble" (Pi's rule); others
    are left out."""
    return [(name, "\n\n", f"<{name}>\n{text.strip()}\n</{name}>") for name, text in sections.items()
            if name.isidentifier() and name != "preamble" and text and text.strip()]


# --- base and append text sources -------------------------------------------------------------

def resolve_prompt_input(value: str | None, description: str, warn: Warn = stderr_warning) -> str | None:
    """A ``--system-prompt``-style value: the file's content if it names an existing path, else the
    text itself. An existing path that cannot be read is reported and the text is used."""
    if not value:
        return None
    path = Path(value).expanduser()
    try:
        exists = path.exists()
    except (OSError, ValueError):
        exists = False  # e.g. a long prompt text that is no valid path
    if not exists:
        return value
    try:
        return read_verbatim(path)
    except OSError as err:
        warn(f"Warning: Could not read {description} file {value}: {err}")
        return value


def discover_system_prompt_file(cwd: Path, agent_dir: Path, *, project: bool = True) -> Path | None:
    """``.pi/SYSTEM.md`` in cwd (when ``project``: a trusted project), else ``SYSTEM.md`` in the agent dir."""
    return _first_existing(*([Path(cwd) / ".pi" / "SYSTEM.md"] if project else []), Path(agent_dir) / "SYSTEM.md")


def discover_append_system_prompt_file(cwd: Path, agent_dir: Path, *, project: bool = True) -> Path | None:
    """``.pi/APPEND_SYSTEM.md`` in cwd (when ``project``), else ``APPEND_SYSTEM.md`` in the agent dir (one file)."""
    return _first_existing(*([Path(cwd) / ".pi" / "APPEND_SYSTEM.md"] if project else []),
                           Path(agent_dir) / "APPEND_SYSTEM.md")


def _first_existing(*paths: Path) -> Path | None:
    return next((p for p in paths if p.exists()), None)


@dataclass(eq=False, repr=False)
class PromptTexts:
    """The system prompt texts from files: a replacement base text and texts to append."""

    custom: str | None = None  # replaces the built-in base text when set
    append: list[str] = field(default_factory=list)


def load_prompt_texts(
    cwd: Path,
    agent_dir: Path,
    *,
    system_prompt: str | None = None,
    append_system_prompt: Sequence[str] = (),
    warn: Warn = stderr_warning,
    project: bool = True,
) -> PromptTexts:
    """Base text: ``--system-prompt`` > ``.pi/SYSTEM.md`` > global ``SYSTEM.md`` > built-in (None).
    Append text: every ``--append-system-prompt`` value in order; without the flag the project
    ``APPEND_SYSTEM.md``, else the global one. ``project=False``: the project's files are skipped (untrusted)."""
    if system_prompt is None:
        found = discover_system_prompt_file(cwd, agent_dir, project=project)
        system_prompt = str(found) if found else None
    custom = resolve_prompt_input(system_prompt, "system prompt", warn)
    sources = list(append_system_prompt)
    if not sources:
        found = discover_append_system_prompt_file(cwd, agent_dir, project=project)
        sources = [str(found)] if found else []
    append = [text for s in sources if (text := resolve_prompt_input(s, "append system prompt", warn)) is not None]
    return PromptTexts(custom=custom, append=append)
