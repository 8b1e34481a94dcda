"""file_trigger: watches a trigger file; whatever an outside program writes there becomes a message that
starts a turn, and the file is emptied.

The file is ``/tmp/agent-trigger.txt`` as in Pi, or the path in ``PI_FILE_TRIGGER`` (so two pi processes,
or parallel tests, need not share one file). The file is polled twice a second.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from pathlib import Path

from pi_core import hookimpl
from pi_core.extension import ExtensionContext

DEFAULT_PATH = "/tmp/agent-trigger.txt"
POLL_SECONDS = 0.5


def trigger_path() -> Path:
    return Path(os.environ.get("PI_FILE_TRIGGER") or DEFAULT_PATH)


def take(path: Path) -> str:
    """The file's text, trimmed; the file is emptied when it had any. A missing file has none."""
    try:
        content = path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return ""
    if content:
        path.write_text("", encoding="utf-8")
    return content


async def watch(ctx: ExtensionContext, path: Path) -> None:
    while True:
        content = take(path)
        if content:
            ctx.send_message("file-trigger", f"External trigger: {content}", display=True, trigger_turn=True)
        await asyncio.sleep(POLL_SECONDS)


class FileTrigger:
    """A class plugin: the watcher task is this session's (one instance per session)."""

    def __init__(self) -> None:
        self.watcher: asyncio.Task[None] | None = None

    @hookimpl
    async def pi_session_start(self, ctx: ExtensionContext) -> None:
        await self.stop()
        path = trigger_path()
        self.watcher = asyncio.get_running_loop().create_task(watch(ctx, path), name="file-trigger")
        if ctx.has_ui:
            ctx.ui.notify(f"Watching {path}", "info")

    @hookimpl
    async def pi_session_shutdown(self) -> None:
        await self.stop()

    async def stop(self) -> None:
        if self.watcher is not None:
            self.watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.watcher
            self.watcher = None
