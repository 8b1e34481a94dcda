"""qna: ``/qna`` has the model pull the questions out of its last reply and puts them in the editor as Q:/A: lines."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from pi_core import MessageEntry, SessionEntry, SlashCommand, hookimpl
from pi_core.extension import CommandContext
from pi_core.tui import BorderedLoader
from pi_core.types import AssistantMessage, TextContent

SYSTEM_PROMPT = """You are a question extractor. Given text from a conversation, extract any questions that need answering and format them for the user to fill in.

Output format:
- List each question on its own line, prefixed with "Q: "
- After each question, add a blank line for the answer prefixed with "A: "
- If no questions are found, output "No questions found in the last message."

Example output:
Q: What is your preferred database?
A: 

Q: Should we use TypeScript or JavaScript?
A: 

Keep questions in the order they appeared. Be concise."""



@dataclass
class Failure:
    message: str


class LastReplyError(Exception):
    """Why there is no reply to extract from (the text is the notice)."""


def last_assistant_text(branch: list[SessionEntry]) -> str:
    """The text of the newest assistant message on the branch; raises when it is missing or incomplete."""
    for entry in reversed(branch):
        if not isinstance(entry, MessageEntry) or not isinstance(entry.message, AssistantMessage):
            continue
        if entry.message.stop_reason != "stop":
            raise LastReplyError(f"Last assistant message incomplete ({entry.message.stop_reason})")
        texts = [b.text for b in entry.message.content if isinstance(b, TextContent)]
        if texts:
            return "\n".join(texts)
    raise LastReplyError("No assistant messages found")


async def qna(args: str, ctx: CommandContext, running: set[asyncio.Task[None]]) -> None:
    """``/qna``; ``running`` keeps the model call's task referenced until it ends (the plugin's, per session)."""
    if ctx.mode != "interactive":
        ctx.ui.notify("qna requires interactive mode", "error")
        return
    model = ctx.model
    try:
        text = last_assistant_text(ctx.session_manager.get_branch())
    except LastReplyError as err:
        ctx.ui.notify(str(err), "error")
        return

    def factory(tui: Any, theme: Any, keybindings: Any, done: Any) -> BorderedLoader:
        loader = BorderedLoader(tui, theme, f"Extracting questions using {model.id}...", keybindings=keybindings)
        loader.on_abort = lambda: done(None)

        async def extract() -> None:
            reply = await ctx.model_registry.complete(model, [text], system_prompt=SYSTEM_PROMPT,
                                                      signal=loader.signal)
            if reply.stop_reason == "aborted" or loader.signal.aborted:
                done(None)
            elif reply.stop_reason == "error":
                done(Failure(reply.error_message or "the model call failed"))
            else:
                done("\n".join(getattr(b, "text", "") for b in reply.content if getattr(b, "type", "") == "text"))

        running.add(task := asyncio.get_running_loop().create_task(extract()))
        task.add_done_callback(running.discard)
        return loader

    result = await ctx.ui.custom(factory)
    if isinstance(result, Failure):
        ctx.ui.notify(f"Question extraction failed: {result.message}", "error")
        return
    if result is None:
        ctx.ui.notify("Cancelled", "info")
        return
    ctx.ui.set_editor_text(result)
    ctx.ui.notify("Questions loaded. Edit and submit when ready.", "info")


class Qna:
    """A class plugin: the tasks it started are this session's (one instance per session)."""

    def __init__(self) -> None:
        self.running: set[asyncio.Task[None]] = set()

    async def qna(self, args: str, ctx: CommandContext) -> None:
        await qna(args, ctx, self.running)

    @hookimpl
    def pi_commands(self) -> list[SlashCommand]:
        return [SlashCommand(name="qna", description="Extract questions from last assistant message into editor",
                             handler=self.qna)]
