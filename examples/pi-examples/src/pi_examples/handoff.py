"""handoff: ``/handoff <goal>`` drafts a focused prompt from the conversation and opens it in a new session."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from pi_core import CompactionEntry, MessageEntry, SessionEntry, SlashCommand, hookimpl
from pi_core.compaction.summarize import serialize_conversation
from pi_core.extension import CommandContext
from pi_core.sessions.messages import convert_to_llm
from pi_core.tui import BorderedLoader

SYSTEM_PROMPT = """You are a context transfer assistant. Given a conversation history and the user's goal for a new thread, generate a focused prompt that:

1. Summarizes relevant context from the conversation (decisions made, approaches taken, key findings)
2. Lists any relevant files that were discussed or modified
3. Clearly states the next task based on the user's goal
4. Is self-contained - the new thread should be able to proceed without the old conversation

Format your response as a prompt the user can send to start the new thread. Be concise but include all necessary context. Do not include any preamble like "Here's the prompt" - just output the prompt itself.

Example output format:
## Context
We've been working on X. Key decisions:
- Decision 1
- Decision 2

Files involved:
- path/to/file1.ts
- path/to/file2.ts

## Task
[Clear description of what to do next based on user's goal]"""


@dataclass
class Failure:
    message: str


def _as_message(entry: SessionEntry) -> dict[str, Any] | None:
    if isinstance(entry, MessageEntry):
        return entry.message.to_json()
    if isinstance(entry, CompactionEntry):
        return {"role": "compactionSummary", "summary": entry.summary, "tokensBefore": entry.tokens_before}
    return None


def handoff_messages(branch: list[SessionEntry]) -> list[dict[str, Any]]:
    """The messages the model sees on this branch: after a compaction, its summary and what it kept."""
    last = max((i for i, e in enumerate(branch) if isinstance(e, CompactionEntry)), default=-1)
    if last >= 0:
        compaction = branch[last]
        assert isinstance(compaction, CompactionEntry)
        kept = next((i for i, e in enumerate(branch) if e.id == compaction.first_kept_entry_id), -1)
        branch = [compaction, *(branch[kept:last] if kept >= 0 else []), *branch[last + 1:]]
    return [m for m in (_as_message(e) for e in branch) if m is not None]


async def handoff(args: str, ctx: CommandContext, running: set[asyncio.Task[None]]) -> None:
    """``/handoff``; ``running`` keeps the model call's task referenced until it ends (the plugin's, per session)."""
    if ctx.mode != "interactive":
        ctx.ui.notify("handoff requires interactive mode", "error")
        return
    goal = args.strip()
    if not goal:
        ctx.ui.notify("Usage: /handoff <goal for new thread>", "error")
        return
    messages = handoff_messages(ctx.session_manager.get_branch())
    if not messages:
        ctx.ui.notify("No conversation to hand off", "error")
        return
    conversation = serialize_conversation(convert_to_llm(messages))
    current_file = ctx.session_manager.session_file
    model = ctx.model
    request = f"## Conversation History\n\n{conversation}\n\n## User's Goal for New Thread\n\n{goal}"

    def factory(tui: Any, theme: Any, keybindings: Any, done: Any) -> BorderedLoader:
        loader = BorderedLoader(tui, theme, "Generating handoff prompt...", keybindings=keybindings)
        loader.on_abort = lambda: done(None)

        async def generate() -> None:
            reply = await ctx.model_registry.complete(model, [request], system_prompt=SYSTEM_PROMPT,
                                                      signal=loader.signal)
            if reply.stop_reason == "aborted" or loader.signal.aborted:
                done(None)
            elif reply.stop_reason == "error":
                done(Failure(reply.error_message or "the model call failed"))
            else:
                done("\n".join(getattr(b, "text", "") for b in reply.content if getattr(b, "type", "") == "text"))

        running.add(task := asyncio.get_running_loop().create_task(generate()))
        task.add_done_callback(running.discard)
        return loader

    draft = await ctx.ui.custom(factory)
    if isinstance(draft, Failure):
        ctx.ui.notify(f"Handoff generation failed: {draft.message}", "error")
        return
    if draft is None:
        ctx.ui.notify("Cancelled", "info")
        return
    edited = await ctx.ui.editor("Edit handoff prompt", draft)
    if edited is None:
        ctx.ui.notify("Cancelled", "info")
        return

    def ready(new_ctx: CommandContext) -> None:
        new_ctx.ui.set_editor_text(edited)
        new_ctx.ui.notify("Handoff ready. Submit when ready.", "info")

    change = await ctx.new_session(parent_session=str(current_file) if current_file else None, with_session=ready)
    if change.cancelled:
        ctx.ui.notify("New session cancelled", "info")


class Handoff:
    """A class plugin: the tasks it started are this session's (one instance per session)."""

    def __init__(self) -> None:
        self.running: set[asyncio.Task[None]] = set()

    async def handoff(self, args: str, ctx: CommandContext) -> None:
        await handoff(args, ctx, self.running)

    @hookimpl
    def pi_commands(self) -> list[SlashCommand]:
        return [SlashCommand(name="handoff", description="Transfer context to a new focused session",
                             handler=self.handoff)]
