"""hidden_thinking_label: collapsed thinking blocks read "Pondering..." (or what ``/thinking-label TEXT`` sets)."""

from __future__ import annotations

from pi_core import SlashCommand, hookimpl
from pi_core.extension import CommandContext, ExtensionContext

DEFAULT_LABEL = "Pondering..."
label = DEFAULT_LABEL


@hookimpl
def pi_session_start(ctx: ExtensionContext, reason: str) -> None:
    ctx.ui.set_hidden_thinking_label(label)


def thinking_label(args: str, ctx: CommandContext) -> None:
    global label
    wanted = args.strip()
    if not wanted:
        label = DEFAULT_LABEL
        ctx.ui.set_hidden_thinking_label()
        ctx.ui.notify(f"Hidden thinking label reset to: {DEFAULT_LABEL}")
        return
    label = wanted
    ctx.ui.set_hidden_thinking_label(label)
    ctx.ui.notify(f"Hidden thinking label set to: {label}")


@hookimpl
def pi_commands() -> list[SlashCommand]:
    return [SlashCommand("thinking-label", "Set the hidden thinking label. Use without args to reset.",
                         thinking_label)]
