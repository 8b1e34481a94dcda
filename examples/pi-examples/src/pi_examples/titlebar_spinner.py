"""titlebar_spinner: a braille spinner in the terminal title while the agent works ("⠋ π - <session> - <dir>")."""

from __future__ import annotations

import asyncio
import contextlib

from pi_core import hookimpl
from pi_core.events import AgentEvent
from pi_core.extension import ExtensionContext

FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"]
INTERVAL_SECONDS = 0.08


def base_title(ctx: ExtensionContext) -> str:
    folder = ctx.cwd.name
    name = ctx.get_session_name()
    return f"π - {name} - {folder}" if name else f"π - {folder}"


async def spin(ctx: ExtensionContext) -> None:
    frame = 0
    while True:
        ctx.ui.set_title(f"{FRAMES[frame % len(FRAMES)]} {base_title(ctx)}")
        frame += 1
        await asyncio.sleep(INTERVAL_SECONDS)


class TitlebarSpinner:
    """A class plugin: the spinner task is this session's (one instance per session)."""

    def __init__(self) -> None:
        self.spinner: asyncio.Task[None] | None = None

    def stop(self, ctx: ExtensionContext) -> None:
        if self.spinner is not None:
            self.spinner.cancel()
            self.spinner = None
        with contextlib.suppress(Exception):  # the terminal may already be gone at shutdown
            ctx.ui.set_title(base_title(ctx))

    @hookimpl
    def pi_agent_event(self, ctx: ExtensionContext, event: AgentEvent) -> None:
        if event.type == "agent_start":
            self.stop(ctx)
            self.spinner = asyncio.get_running_loop().create_task(spin(ctx))
        elif event.type == "agent_settled":
            self.stop(ctx)

    @hookimpl
    def pi_session_shutdown(self, ctx: ExtensionContext, reason: str) -> None:
        self.stop(ctx)
