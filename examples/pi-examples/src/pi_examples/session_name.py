"""session_name: ``/session-name [name]`` sets the session's display name, or shows the current one."""

from __future__ import annotations

from pi_core import SlashCommand, hookimpl
from pi_core.extension import CommandContext


def session_name(args: str, ctx: CommandContext) -> None:
    name = args.strip()
    if name:
        ctx.set_session_name(name)
        ctx.ui.notify(f"Session named: {name}", "info")
        return
    current = ctx.get_session_name()
    ctx.ui.notify(f"Session: {current}" if current else "No session name set", "info")


@hookimpl
def pi_commands() -> list[SlashCommand]:
    return [SlashCommand(name="session-name", description="Set or show session name (usage: /session-name [new name])",
                         handler=session_name)]
