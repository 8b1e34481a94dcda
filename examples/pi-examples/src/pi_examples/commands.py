"""commands: ``/commands [extension|prompt|skill]`` lists every slash command by origin and can show the file
a command comes from."""

from __future__ import annotations

from pi_core import CommandInfo, CompletionItem, SlashCommand, hookimpl
from pi_core.extension import CommandContext

SOURCES = [("extension", "Extensions"), ("prompt", "Prompts"), ("skill", "Skills")]


def complete(prefix: str) -> list[CompletionItem] | None:
    found = [CompletionItem(value=key, label=key) for key, _ in SOURCES if key.startswith(prefix)]
    return found or None


def item(command: CommandInfo) -> str:
    return f"/{command.name} - {command.description}" if command.description else f"/{command.name}"


async def list_commands(args: str, ctx: CommandContext) -> None:
    commands = ctx.get_commands()
    wanted = args.strip()
    shown = [c for c in commands if c.source == wanted] if wanted else commands
    if not shown:
        ctx.ui.notify(f"No {wanted} commands found" if wanted else "No commands found", "info")
        return
    items: list[str] = []
    for key, heading in SOURCES:
        group = [c for c in shown if c.source == key]
        if group:
            items += [f"--- {heading} ---", *(item(c) for c in group)]
    selected = await ctx.ui.select("Available Commands", items)
    if not selected or selected.startswith("---"):
        return
    name = selected.split(" - ")[0][1:]
    command = next((c for c in commands if c.name == name), None)
    path = command.source_info.get("path") if command else None
    if command and path and await ctx.ui.confirm(command.name, f"View source path?\n{path}"):
        ctx.ui.notify(str(path), "info")


@hookimpl
def pi_commands() -> list[SlashCommand]:
    return [SlashCommand("commands", "List available slash commands", list_commands, complete=complete)]
