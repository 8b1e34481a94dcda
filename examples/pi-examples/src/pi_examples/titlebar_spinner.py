"""titlebar_spinner: a braille spinner in the terminal title while the agent works ("⠋ π - <session> - <dir>")."""

from __future__ import annotations

import asyncio
import contextlib

from pi_core import hookimpl
from pi_core.events import AgentEvent
from pi_core.extension import ExtensionContext

FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"]
INTERVAL_SECONDS = 0.08
spinner: asyncio.Task[None] | None = None


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


def stop(ctx: ExtensionContext) -> None:
    global spinner
    if spinner is not None:
        spinner.cancel()
        spinner = None
    with contextlib.suppress(Exception):  # the terminal may already be gone at shutdown
        ctx.ui.set_title(base_title(ctx))


@hookimpl
def pi_agent_event(ctx: ExtensionContext, event: AgentEvent) -> None:
    global spinner
    if event.type == "agent_start":
        stop(ctx)
        spinner = asyncio.get_running_loop().create_task(spin(ctx))
    elif event.type == "agent_settled":
        stop(ctx)


@hookimpl
def pi_session_shutdown(ctx: ExtensionContext, reason: str) -> None:
    stop(ctx)
