"""system_prompt_header: a status line showing how long the system prompt is when a run starts."""

from __future__ import annotations

from pi_core import hookimpl
from pi_core.events import AgentEvent
from pi_core.extension import ExtensionContext

STATUS_KEY = "system-prompt"


def utf16_length(text: str) -> int:
    """The length Pi shows: JavaScript counts UTF-16 code units, so an emoji counts 2."""
    return len(text.encode("utf-16-le")) // 2


@hookimpl
def pi_agent_event(ctx: ExtensionContext, event: AgentEvent) -> None:
    if event.type == "agent_start":
        ctx.ui.set_status(STATUS_KEY, f"System: {utf16_length(ctx.get_system_prompt())} chars")


@hookimpl
def pi_session_shutdown(ctx: ExtensionContext) -> None:
    ctx.ui.set_status(STATUS_KEY, None)
