"""claude_rules: list the project's ``.claude/rules/**/*.md`` in the system prompt so the model reads them."""

from __future__ import annotations

from pathlib import Path

from pi_core import BeforeAgentStart, hookimpl
from pi_core.extension import ExtensionContext


def find_rule_files(folder: Path) -> list[str]:
    """Markdown files under ``folder``, as paths relative to it with ``/`` separators, sorted."""
    if not folder.is_dir():
        return []
    return sorted(path.relative_to(folder).as_posix() for path in folder.rglob("*.md") if path.is_file())


class ClaudeRules:
    """A class plugin: the rules found are this session's (one instance per session)."""

    def __init__(self) -> None:
        self.rules: list[str] = []

    @hookimpl
    def pi_session_start(self, ctx: ExtensionContext) -> None:
        self.rules = find_rule_files(ctx.cwd / ".claude" / "rules")
        if self.rules:
            ctx.ui.notify(f"Found {len(self.rules)} rule(s) in .claude/rules/", "info")

    @hookimpl
    def pi_before_agent_start(self, system_prompt: str) -> BeforeAgentStart | None:
        return BeforeAgentStart(system_prompt=system_prompt + rules_section(self.rules)) if self.rules else None


def rules_section(rules: list[str]) -> str:
    listing = "\n".join(f"- .claude/rules/{rule}" for rule in rules)
    return f"""

## Project Rules

The following project rules are available in .claude/rules/:

{listing}

When working on tasks related to these rules, use the read tool to load the relevant rule files for guidance.
"""
