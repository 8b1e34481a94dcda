"""event_bus: plugins talk over the shared event bus; ``/emit`` sends a ``my:notification`` event to it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pi_core import SlashCommand, hookimpl
from pi_core.extension import CommandContext, ExtensionContext

CHANNEL = "my:notification"

def emit(args: str, ctx: CommandContext) -> None:
    ctx.events.emit(CHANNEL, {"message": args.strip() or "hello", "from": "/emit command"})


class EventBusExample:
    """A class plugin: the context its bus handler shows notices through is this session's."""

    def __init__(self) -> None:
        # The bus handler has no context of its own: it shows notices through the one the session started with.
        self.current: ExtensionContext | None = None

    def on_notification(self, data: Any) -> None:
        if self.current is not None and isinstance(data, dict):
            self.current.ui.notify(f"Event from {data.get('from')}: {data.get('message')}", "info")

    @hookimpl
    def pi_event_handlers(self) -> dict[str, Callable[[Any], None]]:
        return {CHANNEL: self.on_notification}

    @hookimpl
    def pi_session_start(self, ctx: ExtensionContext) -> None:
        self.current = ctx
        ctx.events.emit(CHANNEL, {"message": "Session started", "from": "event-bus-example"})

    @hookimpl
    def pi_commands(self) -> list[SlashCommand]:
        return [SlashCommand("emit", "Emit my:notification event (usage: /emit message)", emit)]
