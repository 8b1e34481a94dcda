"""send_user_message: ``/ask``, ``/steer``, ``/followup`` and ``/askwith`` send real user messages from a plugin."""

from __future__ import annotations

from pi_core import SlashCommand, hookimpl
from pi_core.extension import CommandContext
from pi_core.types import TextContent


def _usage(args: str, ctx: CommandContext, usage: str) -> bool:
    if args.strip():
        return False
    ctx.ui.notify(usage, "warning")
    return True


def ask(args: str, ctx: CommandContext) -> None:
    if _usage(args, ctx, "Usage: /ask <message>"):
        return
    if not ctx.is_idle():
        ctx.ui.notify("Agent is busy. Use /steer or /followup instead.", "warning")
        return
    ctx.send_user_message(args)


def steer(args: str, ctx: CommandContext) -> None:
    if _usage(args, ctx, "Usage: /steer <message>"):
        return
    ctx.send_user_message(args, deliver_as=None if ctx.is_idle() else "steer")


def followup(args: str, ctx: CommandContext) -> None:
    if _usage(args, ctx, "Usage: /followup <message>"):
        return
    if ctx.is_idle():
        ctx.send_user_message(args)
        return
    ctx.send_user_message(args, deliver_as="followUp")
    ctx.ui.notify("Follow-up queued", "info")


def askwith(args: str, ctx: CommandContext) -> None:
    if _usage(args, ctx, "Usage: /askwith <message>"):
        return
    if not ctx.is_idle():
        ctx.ui.notify("Agent is busy", "warning")
        return
    ctx.send_user_message([TextContent(text=f"User request: {args}"), TextContent(text="Please respond concisely.")])


@hookimpl
def pi_commands() -> list[SlashCommand]:
    return [
        SlashCommand(name="ask", description="Send a user message to the agent", handler=ask),
        SlashCommand(name="steer", description="Send a steering message (interrupts current processing)",
                     handler=steer),
        SlashCommand(name="followup", description="Queue a follow-up message (waits for current processing)",
                     handler=followup),
        SlashCommand(name="askwith", description="Send a user message with structured content", handler=askwith),
    ]
