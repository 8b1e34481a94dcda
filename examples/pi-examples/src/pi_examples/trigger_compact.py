"""trigger_compact: compact on its own once the context passes 100k tokens; ``/trigger-compact`` does it now."""

from __future__ import annotations

from typing import Any

from pi_core import SlashCommand, hookimpl
from pi_core.events import AgentEvent
from pi_core.extension import CommandContext, ExtensionContext

COMPACT_THRESHOLD_TOKENS = 100_000


def trigger_compaction(ctx: ExtensionContext, custom_instructions: str | None = None) -> None:
    def completed(_result: Any) -> None:
        if ctx.has_ui:
            ctx.ui.notify("Compaction completed", "info")

    def failed(error: BaseException) -> None:
        if ctx.has_ui:
            ctx.ui.notify(f"Compaction failed: {error}", "error")

    if ctx.has_ui:
        ctx.ui.notify("Compaction started", "info")
    ctx.compact(custom_instructions, on_complete=completed, on_error=failed)


def compact_now(args: str, ctx: CommandContext) -> None:
    trigger_compaction(ctx, args.strip() or None)


class TriggerCompact:
    """A class plugin: the last turn's token count is this session's (one instance per session)."""

    def __init__(self) -> None:
        self.last_tokens: int | None = None

    @hookimpl
    def pi_agent_event(self, ctx: ExtensionContext, event: AgentEvent) -> None:
        if event.type != "turn_end":
            return
        usage = ctx.get_context_usage()
        tokens = usage.tokens if usage is not None else None
        if tokens is None:
            return
        previous, self.last_tokens = self.last_tokens, tokens
        # Only on the turn that crosses the line: a context already over it was compacted, or chose not to be.
        if previous is not None and previous <= COMPACT_THRESHOLD_TOKENS < tokens:
            trigger_compaction(ctx)

    @hookimpl
    def pi_commands(self) -> list[SlashCommand]:
        return [SlashCommand(name="trigger-compact", description="Trigger compaction immediately",
                             handler=compact_now)]
