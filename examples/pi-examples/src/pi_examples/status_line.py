"""status_line: a footer status that follows the turns: "Ready", then "● Turn N...", then "✓ Turn N complete"."""

from __future__ import annotations

from pi_core import hookimpl
from pi_core.events import AgentEvent
from pi_core.extension import ExtensionContext

KEY = "status-demo"


class StatusLine:
    """A class plugin: the turn count is this session's (one instance per session)."""

    def __init__(self) -> None:
        self.turns = 0

    @hookimpl
    def pi_session_start(self, ctx: ExtensionContext, reason: str) -> None:
        self.turns = 0
        ctx.ui.set_status(KEY, ctx.ui.theme.fg("dim", "Ready"))

    @hookimpl
    def pi_agent_event(self, ctx: ExtensionContext, event: AgentEvent) -> None:
        theme = ctx.ui.theme
        if event.type == "turn_start":
            self.turns += 1
            ctx.ui.set_status(KEY, theme.fg("accent", "●") + theme.fg("dim", f" Turn {self.turns}..."))
        elif event.type == "turn_end":
            ctx.ui.set_status(KEY, theme.fg("success", "✓") + theme.fg("dim", f" Turn {self.turns} complete"))
