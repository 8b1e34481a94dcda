"""pirate: ``/pirate`` toggles a system-prompt addition that makes the model talk like a pirate."""

from __future__ import annotations

from pi_core import BeforeAgentStart, SlashCommand, hookimpl
from pi_core.extension import CommandContext, ExtensionContext

PIRATE_PROMPT = """

IMPORTANT: You are now in PIRATE MODE. You must:
- Speak like a stereotypical pirate in all responses
- Use phrases like "Arrr!", "Ahoy!", "Shiver me timbers!", "Avast!", "Ye scurvy dog!"
- Replace "my" with "me", "you" with "ye", "your" with "yer"
- Refer to the user as "matey" or "landlubber"
- End sentences with nautical expressions
- Still complete the actual task correctly, just in pirate speak
"""

_state = {"on": False}


def toggle(args: str, ctx: CommandContext) -> None:
    _state["on"] = not _state["on"]
    ctx.ui.notify("Arrr! Pirate mode enabled!" if _state["on"] else "Pirate mode disabled", "info")


@hookimpl
def pi_commands() -> list[SlashCommand]:
    return [SlashCommand(name="pirate", description="Toggle pirate mode (agent speaks like a pirate)",
                         handler=toggle)]


@hookimpl
def pi_session_start(ctx: ExtensionContext, reason: str) -> None:
    if reason != "reload":
        _state["on"] = False


@hookimpl
def pi_before_agent_start(system_prompt: str) -> BeforeAgentStart | None:
    if not _state["on"]:
        return None
    return BeforeAgentStart(system_prompt=system_prompt + PIRATE_PROMPT)
