"""``terminal.showTerminalProgress``: OSC 9;4 "busy" in the terminal's tab while the agent works, as Pi sends it
(the indeterminate state, repeated every second so a terminal that times it out keeps showing it), cleared when
the run ends or pi exits."""

from __future__ import annotations

import asyncio
from typing import Any

ACTIVE = "\x1b]9;4;3\x07"
CLEAR = "\x1b]9;4;0\x07"
KEEPALIVE_S = 1.0


class TerminalProgress:
    def __init__(self, app: Any, enabled: bool) -> None:
        self.app = app
        self.enabled = enabled
        self._keepalive: asyncio.Task[None] | None = None

    def _send(self, sequence: str) -> None:
        output = self.app.app.output
        output.write_raw(sequence)
        output.flush()

    async def _repeat(self) -> None:
        while True:
            await asyncio.sleep(KEEPALIVE_S)
            self._send(ACTIVE)

    def on_event(self, event: Any) -> None:
        if not self.enabled:
            return
        if event.type == "agent_start" and self._keepalive is None:
            self._send(ACTIVE)
            self._keepalive = self.app.spawn(self._repeat())
        elif event.type == "agent_end":
            self.stop()

    def stop(self) -> None:
        if self._keepalive is not None:
            self._keepalive.cancel()
            self._keepalive = None
            self._send(CLEAR)
