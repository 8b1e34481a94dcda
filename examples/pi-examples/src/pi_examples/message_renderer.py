"""message_renderer: ``/status [warn|error] TEXT`` sends a custom message drawn as a coloured "[LEVEL] TEXT" box."""

from __future__ import annotations

import time
from datetime import datetime
from typing import Any

from pi_core import SlashCommand, hookimpl
from pi_core.extension import CommandContext
from pi_core.render import MessageRenderer, RenderOptions
from pi_core.tui import Box, Text
from pi_core.types import CustomMessage

COLOURS = {"error": "error", "warn": "warning"}


def render_status(message: CustomMessage, options: RenderOptions, theme: Any) -> Box:
    details = getattr(message, "details", None) or {}
    level = str(details.get("level", "info"))
    text = theme.fg(COLOURS.get(level, "success"), f"[{level.upper()}]") + f" {message.content}"
    if options.expanded and details.get("timestamp"):
        shown = datetime.fromtimestamp(details["timestamp"] / 1000).strftime("%H:%M:%S")
        text += "\n" + theme.fg("dim", f"  at {shown}")
    box = Box(1, 1, lambda line: theme.bg("customMessageBg", line))
    box.add_child(Text(text, 0, 0))
    return box


def status(args: str, ctx: CommandContext) -> None:
    words = args.strip().split()
    level, content = "info", args.strip()
    if words and words[0] in ("warn", "error"):
        level = words[0]
        content = " ".join(words[1:]) or "Status update"
    ctx.send_message("status-update", content, display=True,
                     details={"level": level, "timestamp": int(time.time() * 1000)})


@hookimpl
def pi_message_renderers() -> list[MessageRenderer]:
    return [MessageRenderer("status-update", render_status)]


@hookimpl
def pi_commands() -> list[SlashCommand]:
    return [SlashCommand("status", "Send a status message (usage: /status [warn|error] message)", status)]
