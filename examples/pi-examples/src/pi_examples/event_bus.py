"""event_bus: plugins talk over the shared event bus; ``/emit`` sends a ``my:notification`` event to it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pi_core import SlashCommand, hookimpl
from pi_core.extension import CommandContext, ExtensionContext

CHANNEL = "my:notification"

# The bus handler has no context of its own: it shows notices through the one the session started with.
_current: ExtensionContext | None = None


def on_notification(data: Any) -> None:
    if _current is not None and isinstance(data, dict):
        _current.ui.notify(f"Event from {data.get('from')}: {data.get('message')}", "info")


def emit(args: str, ctx: CommandContext) -> None:
    ctx.events.emit(CHANNEL, {"message": args.strip() or "hello", "from": "/emit command"})


@hookimpl
def pi_event_handlers() -> dict[str, Callable[[Any], None]]:
    return {CHANNEL: on_notification}


@hookimpl
def pi_session_start(ctx: ExtensionContext) -> None:
    global _current
    _current = ctx
    ctx.events.emit(CHANNEL, {"message": "Session started", "from": "event-bus-example"})


@hookimpl
def pi_commands() -> list[SlashCommand]:
    return [SlashCommand("emit", "Emit my:notification event (usage: /emit message)", emit)]
