"""What the system prompt is built from: context files, skills, templates, SYSTEM.md and the prompt flags,
read again on ``/reload``; the session's ``PromptSource``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from pi_core.app.args import Args
    from pi_core.app.environment import Startup
    from pi_core.hookspecs.results import SystemPromptOptions
    from pi_core.tools import Tool


class PromptSources:
    """What the system prompt is built from (context files, skills, templates, SYSTEM.md, flags).

    ``reload()`` reads them all again (``/reload``); ``build(tools)`` composes the prompt for the
    active tools, with the plugins' prompt hooks; ``options(tools)`` lists those inputs, which
    ``build(tools, options)`` takes back edited (``pi_before_agent_start``). Plugins add resource
    directories with ``add_resource_paths`` (``pi_resources_discover``).
    """

    def __init__(self, env: Startup, args: Args) -> None:
        self.env, self.args = env, args
        self.plugin_paths: dict[str, dict[str, list[str]]] = {}  # plugin -> kind -> paths
        self._built: dict[str, list[tuple[str, str, str]]] = {}  # prompt text -> its parts, latest last
        self.reload()

    def _paths(self, kind: str) -> list[str]:
        return [p for paths in self.plugin_paths.values() for p in paths.get(kind, [])]

    def reload(self) -> None:
        from pi_core.app.system_prompt import load_prompt_texts
        from pi_core.resources import ResourceSettings, load_resources

        env, args = self.env, self.args
        scopes = ResourceSettings.from_scopes(env.settings.scope_data("global"), env.settings.scope_data("project"))
        self.resources = load_resources(env.cwd, env.agent_dir, no_context_files=args.no_context_files,
                                        no_skills=args.no_skills, skill_paths=[*args.skills, *self._paths("skills")],
                                        no_prompt_templates=args.no_prompt_templates,
                                        template_paths=[*args.prompt_templates, *self._paths("prompts")],
                                        settings=scopes, project=env.project_trusted)
        self.resources.skill_commands = env.settings.enable_skill_commands
        env.resources = self.resources
        env.warnings.extend(str(d) for d in self.resources.diagnostics)
        self.texts = load_prompt_texts(env.cwd, env.agent_dir, system_prompt=args.system_prompt,
                                       append_system_prompt=args.append_system_prompt, project=env.project_trusted)

    def add_resource_paths(self, owner: str, skills: Sequence[str | Path], prompts: Sequence[str | Path],
                           themes: Sequence[str | Path]) -> None:
        self.plugin_paths[owner] = {"skills": [str(p) for p in skills], "prompts": [str(p) for p in prompts],
                                    "themes": [str(p) for p in themes]}
        self.reload()

    @property
    def theme_paths(self) -> list[str]:
        """Theme files and directories plugins contributed (the interactive UI loads them)."""
        return self._paths("themes")

    def options(self, tools: list[Tool]) -> SystemPromptOptions:
        from pi_core.app.system_prompt import gather_prompt_hooks
        from pi_core.hookspecs.results import SystemPromptOptions

        _snippets, guidelines = gather_prompt_hooks(self.env.plugins, frozenset(t.name for t in tools))
        return SystemPromptOptions(
            custom_prompt=self.texts.custom, selected_tools=[t.name for t in tools],
            tool_snippets={t.name: t.prompt_snippet for t in tools if t.prompt_snippet},
            prompt_guidelines=[g for t in tools for g in t.prompt_guidelines] + guidelines,
            append_system_prompt=list(self.texts.append), cwd=str(self.env.cwd),
            context_files=[str(f.path) for f in self.resources.context_files],
            skills=[s.name for s in self.resources.skills])

    def build(self, tools: list[Tool], options: SystemPromptOptions | None = None) -> str:
        parts = self._parts(tools, options)
        text = "".join(separator + text for _name, separator, text in parts)
        self._built.pop(text, None)
        self._built[text] = parts
        while len(self._built) > 4:  # the base prompt and a few a plugin's hook made from it
            del self._built[next(iter(self._built))]
        return text

    def sections_of(self, prompt: str) -> dict[str, str] | None:
        from pi_core.app.system_prompt import part_sections

        parts = self._built.get(prompt)
        return part_sections(parts) if parts is not None else None

    def _parts(self, tools: list[Any], options: SystemPromptOptions | None) -> list[tuple[str, str, str]]:
        from pi_core.app.system_prompt import (
            gather_prompt_hooks,
            plugin_parts,
            prompt_parts,
        )

        env = self.env
        snippets, guidelines = gather_prompt_hooks(env.plugins, frozenset(t.name for t in tools))
        parts = prompt_parts(
            tools=tools, cwd=env.cwd,
            custom_prompt=options.custom_prompt if options is not None else self.texts.custom,
            append_prompts=options.append_system_prompt if options is not None else self.texts.append,
            context_files=self.resources.context_files, skills=self.resources.skills, extra_snippets=snippets,
            extra_guidelines=guidelines)
        return parts + plugin_parts(options.sections if options is not None else {})
