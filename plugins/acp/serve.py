"""The ACP mode's run: the SDK's agent-side connection on pi's stdio transport, until the client hangs up.

stdout is the protocol's alone (fd 1 points at stderr, as in RPC mode), so a plugin's ``print`` or a child
process cannot corrupt it. SIGTERM, SIGHUP and SIGINT stop every turn, kill the shells pi started and end
the process as EOF does; the sessions keep what was done.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pi_core.mode import ModeRequest
    from pi_core.session import AgentSession

EXIT_CODES = {signal.SIGTERM: 143, signal.SIGHUP: 129, signal.SIGINT: 130}


async def serve(request: ModeRequest[AgentSession], *, stdin_fd: int = 0, stdout: object = None) -> int:
    """Serve ACP until stdin closes (exit 0) or a signal (128 + its number)."""
    from acp.agent.connection import AgentSideConnection
    from pi_plugins.acp.server import PiAgent
    from pi_plugins.acp.transport import StdioTransport

    from pi_core.modes.rpc import protect_stdout

    transport = StdioTransport(stdin_fd, stdout if stdout is not None else protect_stdout())  # type: ignore[arg-type]
    agent = PiAgent(request)
    # fork, resume and close are "unstable" in this SDK: without the flag it answers them "Method not found"
    connection = AgentSideConnection(agent, transport, listening=False, use_unstable_protocol=True)
    stopped: asyncio.Future[int] = asyncio.get_running_loop().create_future()
    remove = _on_signals(stopped)
    listening: asyncio.Future[Any] = asyncio.ensure_future(connection.listen())
    try:
        await asyncio.wait([listening, stopped], return_when=asyncio.FIRST_COMPLETED)
        code = stopped.result() if stopped.done() else 0
    finally:
        remove()
        listening.cancel()
        await agent.close()
        await connection.close()
        sys.stderr.flush()
    return code


def _on_signals(stopped: asyncio.Future[int]) -> Callable[[], None]:
    from pi_core.toolkit.procs import kill_all_children

    loop = asyncio.get_running_loop()
    installed = []
    for signum, code in EXIT_CODES.items():
        def on_signal(code: int = code) -> None:
            kill_all_children()
            if not stopped.done():
                stopped.set_result(code)

        try:
            loop.add_signal_handler(signum, on_signal)
        except (NotImplementedError, RuntimeError, ValueError):
            continue  # not the main thread (tests, embedding): the default handling stays
        installed.append(signum)

    def remove() -> None:
        for signum in installed:
            loop.remove_signal_handler(signum)

    return remove
