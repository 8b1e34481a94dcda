"""entry_renderer: ``/status-card TEXT`` stores a session entry drawn as a "[status]" card, never sent to the model."""

from __future__ import annotations

import time
from datetime import datetime
from typing import Any

from pi_core import SlashCommand, hookimpl
from pi_core.extension import CommandContext
from pi_core.hookspecs.entries import CustomEntry
from pi_core.render import EntryRenderer, RenderOptions
from pi_core.tui import Box, Text


def render_card(entry: CustomEntry, options: RenderOptions, theme: Any) -> Box:
    data = entry.data or {"message": "No data", "timestamp": int(time.time() * 1000)}
    box = Box(1, 1, lambda line: theme.bg("customMessageBg", line))
    box.add_child(Text(f"{theme.fg('accent', '[status]')} {data['message']}", 0, 0))
    if options.expanded:
        shown = datetime.fromtimestamp(data["timestamp"] / 1000).strftime("%Y-%m-%d %H:%M:%S")
        box.add_child(Text(theme.fg("dim", shown), 0, 0))
    return box


def status_card(args: str, ctx: CommandContext) -> None:
    ctx.append_entry("status-card", {"message": args.strip() or "Status card", "timestamp": int(time.time() * 1000)})


@hookimpl
def pi_entry_renderers() -> list[EntryRenderer]:
    return [EntryRenderer("status-card", render_card)]


@hookimpl
def pi_commands() -> list[SlashCommand]:
    return [SlashCommand("status-card", "Render a durable status card that is not sent to the LLM", status_card)]
