"""mac_system_theme: follows macOS's dark/light appearance, asking ``osascript`` every 2 seconds and switching
pi between its ``dark`` and ``light`` themes when the answer changes.

Off macOS (no ``osascript``) the appearance reads as light. Only the interactive UI can switch themes; in
RPC mode the switch is refused and nothing else happens.
"""

from __future__ import annotations

import asyncio
import contextlib

from pi_core import hookimpl
from pi_core.extension import ExtensionContext

POLL_SECONDS = 2.0
ASK_DARK_MODE = 'tell application "System Events" to tell appearance preferences to return dark mode'


async def is_dark_mode(ctx: ExtensionContext) -> bool:
    answer = await ctx.exec("osascript", ["-e", ASK_DARK_MODE], timeout=10)  # missing program: code 1
    return answer.code == 0 and answer.stdout.strip() == "true"


async def theme_name(ctx: ExtensionContext) -> str:
    return "dark" if await is_dark_mode(ctx) else "light"


async def follow(ctx: ExtensionContext, current: str) -> None:
    while True:
        await asyncio.sleep(POLL_SECONDS)
        wanted = await theme_name(ctx)
        if wanted != current:
            current = wanted
            ctx.ui.set_theme(current)


class MacSystemTheme:
    """A class plugin: the polling task is this session's (one instance per session)."""

    def __init__(self) -> None:
        self.poller: asyncio.Task[None] | None = None

    @hookimpl
    async def pi_session_start(self, ctx: ExtensionContext) -> None:
        await self.stop()
        current = await theme_name(ctx)
        ctx.ui.set_theme(current)
        self.poller = asyncio.get_running_loop().create_task(follow(ctx, current), name="mac-system-theme")

    @hookimpl
    async def pi_session_shutdown(self) -> None:
        await self.stop()

    async def stop(self) -> None:
        if self.poller is not None:
            self.poller.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.poller
            self.poller = None
