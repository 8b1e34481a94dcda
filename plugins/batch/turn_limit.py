"""turn_limit: ``--batch-max-turns N`` ends a session's run after N model requests.

``pi batch`` loads this file into each task's pi with ``-e`` (it is no entry point: other sessions never pay for
an event hook). The stop has to happen inside pi, between one turn and the next: an abort sent over RPC after
the N-th reply arrived while the tools ran and the next request was already out, so a task with
``max_turns: 3`` made 4 requests and, with a fast model, 9. Here ``turn_end`` is awaited by the loop before
it asks the model again, and an aborted run sends no further request. A retried request ends in a
``turn_end`` of its own, so retries count too.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from pi_core import Flag, hookimpl
from pi_core.events import AgentEvent
from pi_core.extension import ExtensionContext

FLAG = "batch-max-turns"


@dataclass
class _Turns:
    done: int = 0


_turns = _Turns()  # one pi process runs one task


@hookimpl
def pi_flags() -> list[Flag]:
    return [Flag(FLAG, "End the run after this many model requests (set by pi batch)", type="string")]


@hookimpl
def pi_agent_event(ctx: ExtensionContext, event: AgentEvent) -> None:
    limit = _limit(ctx)
    if limit is None:
        return
    if event.type == "turn_end":
        _turns.done += 1
        goes_on = event.message.stop_reason == "toolUse" or ctx.has_pending_messages()
        if _turns.done >= limit and goes_on:
            ctx.abort()
    elif event.type == "auto_retry_start" and _turns.done >= limit:
        # The retry's wait begins only after this event: cancel it once it does.
        asyncio.get_running_loop().call_soon(ctx.abort)


def _limit(ctx: ExtensionContext) -> int | None:
    value = ctx.get_flag(FLAG)
    return int(value) if isinstance(value, str) and value.isdigit() and int(value) > 0 else None
