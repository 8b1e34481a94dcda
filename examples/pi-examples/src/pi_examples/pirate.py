"""pirate: ``/pirate`` toggles a system-prompt addition that makes the model talk like a pirate."""

from __future__ import annotations

from pi_core import BeforeAgentStart, SlashCommand, hookimpl
from pi_core.extension import CommandContext

PIRATE_PROMPT = """

IMPORTANT: You are now in PIRATE MODE. You must:
- Speak like a stereotypical pirate in all responses
- Use phrases like "Arrr!", "Ahoy!", "Shiver me timbers!", "Avast!", "Ye scurvy dog!"
- Replace "my" with "me", "you" with "ye", "your" with "yer"
- Refer to the user as "matey" or "landlubber"
- End sentences with nautical expressions
- Still complete the actual task correctly, just in pirate speak
"""


class Pirate:
    """A class plugin: pirate mode is this session's, off in each new one (one instance per session)."""

    def __init__(self) -> None:
        self.on = False

    def toggle(self, args: str, ctx: CommandContext) -> None:
        self.on = not self.on
        ctx.ui.notify("Arrr! Pirate mode enabled!" if self.on else "Pirate mode disabled", "info")

    @hookimpl
    def pi_commands(self) -> list[SlashCommand]:
        return [SlashCommand(name="pirate", description="Toggle pirate mode (agent speaks like a pirate)",
                             handler=self.toggle)]

    @hookimpl
    def pi_before_agent_start(self, system_prompt: str) -> BeforeAgentStart | None:
        if not self.on:
            return None
        return BeforeAgentStart(system_prompt=system_prompt + PIRATE_PROMPT)
