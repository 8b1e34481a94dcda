"""claude_rules: list the project's ``.claude/rules/**/*.md`` in the system prompt so the model reads them."""

from __future__ import annotations

from pathlib import Path

from pi_core import BeforeAgentStart, hookimpl
from pi_core.extension import ExtensionContext

_rules: list[str] = []


def find_rule_files(folder: Path) -> list[str]:
    """Markdown files under ``folder``, as paths relative to it with ``/`` separators, sorted."""
    if not folder.is_dir():
        return []
    return sorted(path.relative_to(folder).as_posix() for path in folder.rglob("*.md") if path.is_file())


@hookimpl
def pi_session_start(ctx: ExtensionContext) -> None:
    _rules[:] = find_rule_files(ctx.cwd / ".claude" / "rules")
    if _rules:
        ctx.ui.notify(f"Found {len(_rules)} rule(s) in .claude/rules/", "info")


@hookimpl
def pi_before_agent_start(system_prompt: str) -> BeforeAgentStart | None:
    if not _rules:
        return None
    listing = "\n".join(f"- .claude/rules/{rule}" for rule in _rules)
    return BeforeAgentStart(system_prompt=system_prompt + f"""

## Project Rules

The following project rules are available in .claude/rules/:

{listing}

When working on tasks related to these rules, use the read tool to load the relevant rule files for guidance.
""")
