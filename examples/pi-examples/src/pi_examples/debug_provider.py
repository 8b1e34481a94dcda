"""debug_provider: ``/debug-provider [on|off]`` keeps each reply's raw provider stream events as a session entry."""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from typing import Any

from pi_core import SlashCommand, hookimpl
from pi_core.events import AgentEvent
from pi_core.extension import CommandContext, ExtensionContext
from pi_core.hookspecs.entries import CustomEntry
from pi_core.render import EntryRenderer, RenderOptions

ENTRY_TYPE = "debug-provider-events"
STATUS_KEY = "debug-provider"
USAGE = "Usage: /debug-provider [on|off]"


@dataclass
class Capture:
    enabled: bool = False
    events: list[Any] | None = None  # the current turn's raw events while capturing
    completed: dict[str, Any] | None = None  # the entry to append at turn end

    def reset(self) -> None:
        self.events, self.completed = None, None


def render_entry(entry: CustomEntry, options: RenderOptions, theme: Any) -> Any:
    """One line naming the model and the event count; expanded, the events as indented JSON."""
    from rich.text import Text

    data = entry.data
    if not isinstance(data, dict):
        return Text("[provider debug] Missing event data", style="yellow")
    events = data.get("events") or []
    count = f"{len(events)} event{'' if len(events) == 1 else 's'}"
    text = Text.assemble(("[provider debug]", "cyan"),
                         f" {data.get('provider')}/{data.get('model')} ({data.get('api')}) · {count}")
    if options.expanded:
        text.append("\n" + json.dumps(events, indent=2, ensure_ascii=False))
    else:
        text.append(" (ctrl+o to view events)", style="dim")
    return text


class DebugProvider:
    """A class plugin: whether capture is on, and what it caught, are this session's (one instance per
    session)."""

    def __init__(self) -> None:
        self.capture = Capture()

    def toggle(self, args: str, ctx: CommandContext) -> None:
        capture, wanted = self.capture, args.strip().lower()
        if wanted not in ("", "on", "off"):
            ctx.ui.notify(USAGE, "warning")
            return
        capture.enabled = not capture.enabled if wanted == "" else wanted == "on"
        if not capture.enabled:
            capture.reset()
        ctx.ui.set_status(STATUS_KEY, "provider debug" if capture.enabled else None)
        ctx.ui.notify(f"Provider event capture {'enabled' if capture.enabled else 'disabled'}", "info")

    @hookimpl
    def pi_commands(self) -> list[SlashCommand]:
        return [SlashCommand(name="debug-provider", description="Toggle capture of raw provider stream events",
                             handler=self.toggle)]

    @hookimpl
    def pi_session_start(self) -> None:
        self.capture.enabled = False
        self.capture.reset()

    @hookimpl
    def pi_provider_stream_event(self, data: Any) -> None:
        if self.capture.events is not None:
            self.capture.events.append(copy.deepcopy(data))

    @hookimpl
    def pi_agent_event(self, ctx: ExtensionContext, event: AgentEvent) -> None:
        capture = self.capture
        if event.type == "turn_start":
            capture.events = [] if capture.enabled else None
        elif event.type == "message_end":
            message = event.message
            if getattr(message, "role", None) != "assistant" or capture.events is None:
                return
            capture.completed = {"provider": message.provider, "api": message.api, "model": message.model,
                                 "events": capture.events}
            capture.events = None
        elif event.type == "turn_end" and capture.completed is not None:
            ctx.append_entry(ENTRY_TYPE, capture.completed)
            capture.completed = None

    @hookimpl
    def pi_entry_renderers(self) -> list[EntryRenderer]:
        return [EntryRenderer(ENTRY_TYPE, render_entry)]
