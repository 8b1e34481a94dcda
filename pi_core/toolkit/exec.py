"""``ctx.exec``: run a program (no shell) and collect its output, with a timeout, an abort signal and a cap.

Behaves like Pi's ``pi.exec``: stdout and stderr are decoded as UTF-8 across chunk boundaries; on timeout,
abort or when the output passes ``max_buffer`` bytes the program is sent SIGTERM, then SIGKILL after 5 s,
and ``killed`` is True; a program killed by a signal reports ``128 + signal``; a program that cannot start
reports code 1 with the reason on stderr. pi kills the whole process group, so nothing is left behind.
"""

from __future__ import annotations

import asyncio
import codecs
import os
import signal as signals
from pathlib import Path

from pi_core.session_host import ExecResult
from pi_core.signals import AbortSignal

MAX_BUFFER = 256 * 1024 * 1024
FORCE_KILL_SECONDS = 5.0


async def run_program(command: str, args: list[str], *, cwd: Path, timeout: float | None = None,
                      signal: AbortSignal | None = None, max_buffer: int = MAX_BUFFER) -> ExecResult:
    try:
        proc = await asyncio.create_subprocess_exec(
            command, *args, cwd=str(cwd), stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, start_new_session=os.name == "posix")
    except OSError as err:
        return ExecResult(stdout="", stderr=f"{command}: {err.strerror or err}", code=1)
    state = {"killed": False, "truncated": False, "taken": 0}
    force: list[asyncio.TimerHandle] = []
    loop = asyncio.get_running_loop()

    def send(sig: int) -> None:
        if proc.returncode is not None:
            return
        try:
            if os.name == "posix":
                os.killpg(proc.pid, sig)
            else:
                proc.send_signal(sig)
        except ProcessLookupError:
            pass

    def kill() -> None:
        if state["killed"]:
            return
        state["killed"] = True
        send(signals.SIGTERM)
        force.append(loop.call_later(FORCE_KILL_SECONDS, send, getattr(signals, "SIGKILL", signals.SIGTERM)))

    async def read(stream: asyncio.StreamReader | None, out: list[str]) -> None:
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        while stream is not None:
            chunk = await stream.read(65536)
            if not chunk:
                break
            if state["truncated"]:
                continue
            room = max_buffer - state["taken"]
            if len(chunk) > room:
                chunk, state["truncated"] = chunk[:room], True
                kill()
            state["taken"] += len(chunk)
            out.append(decoder.decode(chunk))
        if not state["truncated"]:
            out.append(decoder.decode(b"", final=True))

    def on_abort() -> None:
        loop.call_soon_threadsafe(kill)

    remove = signal.add_callback(on_abort) if signal is not None else None
    if signal is not None and signal.aborted:
        kill()
    timer = loop.call_later(timeout, kill) if timeout and timeout > 0 else None
    stdout: list[str] = []
    stderr: list[str] = []
    try:
        await asyncio.gather(read(proc.stdout, stdout), read(proc.stderr, stderr))
        code = await proc.wait()
    finally:
        for handle in (timer, *force):
            if handle is not None:
                handle.cancel()
        if remove is not None:
            remove()
    exit_code = 128 - code if code < 0 else code
    if state["truncated"] and exit_code == 0:
        exit_code = 1
    return ExecResult(stdout="".join(stdout), stderr="".join(stderr), code=exit_code,
                      killed=bool(state["killed"]), truncated=bool(state["truncated"]))
