"""hidden_thinking_label: collapsed thinking blocks read "Pondering..." (or what ``/thinking-label TEXT`` sets)."""

from __future__ import annotations

from pi_core import SlashCommand, hookimpl
from pi_core.extension import CommandContext, ExtensionContext

DEFAULT_LABEL = "Pondering..."


class HiddenThinkingLabel:
    """A class plugin: the label is this session's (one instance per session)."""

    def __init__(self) -> None:
        self.label = DEFAULT_LABEL

    @hookimpl
    def pi_session_start(self, ctx: ExtensionContext, reason: str) -> None:
        ctx.ui.set_hidden_thinking_label(self.label)

    def thinking_label(self, args: str, ctx: CommandContext) -> None:
        wanted = args.strip()
        if not wanted:
            self.label = DEFAULT_LABEL
            ctx.ui.set_hidden_thinking_label()
            ctx.ui.notify(f"Hidden thinking label reset to: {DEFAULT_LABEL}")
            return
        self.label = wanted
        ctx.ui.set_hidden_thinking_label(self.label)
        ctx.ui.notify(f"Hidden thinking label set to: {self.label}")

    @hookimpl
    def pi_commands(self) -> list[SlashCommand]:
        return [SlashCommand("thinking-label", "Set the hidden thinking label. Use without args to reset.",
                             self.thinking_label)]
