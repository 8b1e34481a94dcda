"""A user's own shell command (RPC ``bash``, interactive ``!cmd``), recorded as a bashExecution message."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pi_core.errors import PiError
from pi_core.hookspecs.results import UserBash
from pi_core.signals import AbortSignal

if TYPE_CHECKING:
    from pi_core.session import AgentSession
    from pi_core.toolkit.shell import BashResult


async def run_user_command(session: AgentSession, command: str, signal: AbortSignal,
                           on_output: Callable[[str], None] | None = None, *,
                           exclude_from_context: bool = False) -> BashResult:
    """Run ``command`` in the session's cwd with the bash tool's shell and command prefix, off the event loop.

    Plugins decide first (``pi_user_bash``): run it through their shell operations (a VM, SSH) or hand back
    a result. A plugin that raises stops the command: PiError naming the plugin, nothing runs locally.
    """
    from pi_core.toolkit.shell import BashResult, run_command

    settings = session.config.tool_settings
    operations = None
    if session.plugins.has("pi_user_bash"):
        def refuse(plugin: str, err: BaseException) -> None:
            raise PiError(f'Plugin "{plugin}" failed on this command (pi_user_bash): {err}; it was not run')

        decision = await session.plugins.call("pi_user_bash", ctx=session.ext, command=command,
                                              exclude_from_context=exclude_from_context, cwd=session.config.cwd,
                                              on_error=refuse)
        if decision is not None and not isinstance(decision, UserBash):
            raise PiError("Invalid user_bash handler result: return None for local execution or exactly one "
                          "valid UserBash(operations=...) or UserBash(result=...)")
        if decision is not None and decision.result is not None:
            result = decision.result
            return result if isinstance(result, BashResult) else BashResult(**result)
        operations = decision.operations if decision is not None else None
    prefix = settings.shell_command_prefix
    full = f"{prefix}\n{command}" if prefix else command
    return await asyncio.to_thread(run_command, full, str(session.config.cwd), shell_path=settings.shell_path,
                                   signal=signal, on_output=on_output, operations=operations,
                                   output_dir=session.full_output_dir())


class BashRunner:
    """Runs commands in the session cwd and records each as a bashExecution message
    (``AgentSession.record_user_bash``: now, or after the run when the agent is streaming)."""

    def __init__(self, session: AgentSession) -> None:
        self.session = session
        self._signals: set[AbortSignal] = set()

    async def run(self, command: str) -> dict[str, Any]:  # open: the bash result as RPC JSON
        signal = AbortSignal()
        self._signals.add(signal)
        try:
            result = await run_user_command(self.session, command, signal)
        finally:
            self._signals.discard(signal)
        data: dict[str, Any] = {"output": result.output}
        if result.exit_code is not None:
            data["exitCode"] = result.exit_code
        data["cancelled"] = result.cancelled
        data["truncated"] = result.truncated
        if result.truncated and result.full_output_path:
            data["fullOutputPath"] = result.full_output_path
        self._record(command, data)
        return data

    def abort(self) -> None:
        for signal in list(self._signals):
            signal.abort()

    def _record(self, command: str, data: dict[str, Any]) -> None:
        from pi_core.types import now_ms

        self.session.record_user_bash({"role": "bashExecution", "command": command, **data, "timestamp": now_ms()})
