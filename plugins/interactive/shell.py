"""``!cmd`` and ``!!cmd``: run a shell command from the editor, show it, and record it in the session.

``!cmd`` adds a ``bashExecution`` message the model sees on the next request; ``!!cmd`` records it
with ``excludeFromContext`` so only the user sees it. While the agent is working, the message is
added when the run ends, so it never lands between a tool call and its result.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from pi_core.errors import PiError
from pi_core.signals import AbortSignal
from pi_core.types import CustomMessage

if TYPE_CHECKING:
    from pi_plugins.interactive.commands import CommandUI


class ShellJob:
    def __init__(self, ui: CommandUI, command: str, send_output: bool) -> None:
        self.ui = ui
        self.command = command
        self.send_output = send_output
        self.signal = AbortSignal()
        self.running = False
        self.tail = ""

    def cancel(self) -> None:
        self.signal.abort()

    def _on_output(self, text: str) -> None:
        self.tail = text
        self.ui.view.shell = (self.command, text)
        loop = self._loop
        loop.call_soon_threadsafe(self.ui.invalidate)

    async def run(self) -> CustomMessage | None:
        from pi_core.control.user_bash import run_user_command

        if not self.command:
            self.ui.notify("Usage: !command (sends its output) or !!command (does not)", "yellow")
            return None
        self._loop = asyncio.get_running_loop()
        self.running = True
        self.ui.view.shell = (self.command, "")
        self.ui.invalidate()
        try:
            result = await run_user_command(self.ui.session, self.command, self.signal, on_output=self._on_output,
                                            exclude_from_context=not self.send_output)
        except PiError as err:
            self.ui.notify(str(err), "red")
            return None
        finally:
            self.running = False
            self.ui.view.shell = None
            self.ui.invalidate()
        message = CustomMessage.model_validate({
            "role": "bashExecution", "command": self.command, "output": result.output, "exitCode": result.exit_code,
            "cancelled": result.cancelled, "truncated": result.truncated, "fullOutputPath": result.full_output_path,
            "excludeFromContext": not self.send_output})
        self.ui.view.commit(self.ui.view.render_bash_execution(message))
        session = self.ui.session
        if session.is_streaming:
            await session.wait_for_idle()
        session.agent.state.messages.append(message)
        session.store.append_message(message)
        return message
