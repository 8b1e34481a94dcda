"""prompt_customizer: a ``tool_guidance`` system-prompt section built from the active tools and skills."""

from __future__ import annotations

from pi_core import SystemPromptOptions, hookimpl

SECTION = "tool_guidance"
RULES = {
    "read": ["- Use `read` for file contents; it supports text and images.",
             "- For large files, use `offset` and `limit` to read in chunks."],
    "bash": ["- Use `bash` for file operations such as `ls`, `find`, and `grep`."],
    "edit": ["- Use `edit` for precise text replacements that match existing content exactly."],
    "write": ["- Use `write` to create new files or replace existing files completely."],
}


def tool_guidance(options: SystemPromptOptions) -> str:
    rules = [rule for tool, lines in RULES.items() if tool in options.selected_tools for rule in lines]
    if options.skills:
        rules.append(f"- Available skills: {', '.join(options.skills)}.")
    return "\n".join(rules)


@hookimpl
def pi_before_agent_start(options: SystemPromptOptions | None) -> None:
    if options is None:
        return
    guidance = tool_guidance(options)
    if guidance:
        options.sections[SECTION] = guidance
    else:
        options.sections.pop(SECTION, None)
