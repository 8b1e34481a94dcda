"""summarize: ``/summarize`` has openai/gpt-5.2 summarise the conversation and shows it in a markdown panel."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from pi_core import MessageEntry, SessionEntry, SlashCommand, hookimpl
from pi_core.extension import CommandContext
from pi_core.tui import Container, DynamicBorder, Markdown, Text, matches_key
from pi_core.types import AssistantMessage, UserMessage


def _tool_calls(message: AssistantMessage) -> list[str]:
    return [f"Tool {call.name} was called with args {json.dumps(call.arguments or {}, separators=(',', ':'))}"
            for call in message.tool_calls()]


def conversation_text(entries: list[SessionEntry]) -> str:
    """User and assistant messages as ``User: ...`` / ``Assistant: ...`` sections, with the tool calls made."""
    sections: list[str] = []
    for entry in entries:
        message = entry.message if isinstance(entry, MessageEntry) else None
        if not isinstance(message, (UserMessage, AssistantMessage)):
            continue
        lines: list[str] = []
        text = message.text().strip()
        if text:
            lines.append(f"{'User' if message.role == 'user' else 'Assistant'}: {text}")
        if isinstance(message, AssistantMessage):
            lines.extend(_tool_calls(message))
        if lines:
            sections.append("\n".join(lines))
    return "\n\n".join(sections)


def summary_prompt(conversation: str) -> str:
    return ("Summarize this conversation so I can resume it later.\n"
            "Include goals, key decisions, progress, open questions, and next steps.\n"
            "Keep it concise and structured with headings.\n\n"
            f"<conversation>\n{conversation}\n</conversation>")


class SummaryPanel:
    """The summary as markdown between two rules; Enter or Escape closes it."""

    def __init__(self, summary: str, theme: Any, done: Callable[[Any], None]) -> None:
        self.done = done
        border = DynamicBorder(lambda s: theme.fg("accent", s))
        self.container = Container(border, Text(theme.fg("accent", theme.bold("Conversation Summary")), 1, 0),
                                   Markdown(summary, 1, 1, theme), Text(theme.fg("dim", "Press Enter or Esc to close"), 1, 0),
                                   border)

    def render(self, width: int) -> list[str]:
        return self.container.render(width)

    def invalidate(self) -> None:
        self.container.invalidate()

    def handle_input(self, data: str) -> None:
        if matches_key(data, "enter") or matches_key(data, "escape"):
            self.done(None)


async def summarize(args: str, ctx: CommandContext) -> None:
    conversation = conversation_text(ctx.session_manager.get_branch())
    if not conversation.strip():
        if ctx.has_ui:
            ctx.ui.notify("No conversation text found", "warning")
        return
    if ctx.has_ui:
        ctx.ui.notify("Preparing summary...", "info")
    model = ctx.model_registry.find("openai", "gpt-5.2")
    if model is None:
        if ctx.has_ui:
            ctx.ui.notify("Model openai/gpt-5.2 not found", "warning")
        return
    if not ctx.model_registry.has_auth(model):
        if ctx.has_ui:
            ctx.ui.notify("No authentication configured for openai/gpt-5.2", "warning")
        return
    response = await ctx.model_registry.complete(model, [summary_prompt(conversation)], reasoning="high")
    if response.stop_reason == "error":
        ctx.ui.notify(f"Summary failed: {response.error_message}", "error")
        return
    summary = "\n".join(getattr(block, "text", "") for block in response.content if getattr(block, "type", "") == "text")
    if ctx.mode != "interactive":
        return
    await ctx.ui.custom(lambda tui, theme, keybindings, done: SummaryPanel(summary, theme, done))


@hookimpl
def pi_commands() -> list[SlashCommand]:
    return [SlashCommand(name="summarize", description="Summarize the current conversation in a custom UI",
                         handler=summarize)]
