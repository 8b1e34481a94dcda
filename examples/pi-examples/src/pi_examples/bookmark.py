"""bookmark: ``/bookmark [label]`` labels the last reply for ``/tree``; ``/unbookmark`` removes the newest label."""

from __future__ import annotations

import time

from pi_core import MessageEntry, SlashCommand, hookimpl
from pi_core.extension import CommandContext


def bookmark(args: str, ctx: CommandContext) -> None:
    label = args.strip() or f"bookmark-{int(time.time() * 1000)}"
    for entry in reversed(ctx.session_manager.get_entries()):
        if isinstance(entry, MessageEntry) and entry.message.role == "assistant":
            ctx.set_label(entry.id, label)
            ctx.ui.notify(f"Bookmarked as: {label}", "info")
            return
    ctx.ui.notify("No assistant message to bookmark", "warning")


def unbookmark(args: str, ctx: CommandContext) -> None:
    for entry in reversed(ctx.session_manager.get_entries()):
        label = ctx.session_manager.get_label(entry.id)
        if label:
            ctx.set_label(entry.id, None)
            ctx.ui.notify(f"Removed bookmark: {label}", "info")
            return
    ctx.ui.notify("No bookmarked entry found", "warning")


@hookimpl
def pi_commands() -> list[SlashCommand]:
    return [SlashCommand(name="bookmark", description="Bookmark last message (usage: /bookmark [label])",
                         handler=bookmark),
            SlashCommand(name="unbookmark", description="Remove bookmark from last labeled entry",
                         handler=unbookmark)]
