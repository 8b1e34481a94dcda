"""RPC mode (``pi --mode rpc``): drive a session over stdin/stdout with Pi's JSONL protocol (docs/rpc.md).

``run_rpc_mode(session)`` serves until stdin closes. With the real stdout, the protocol gets a private
copy of file descriptor 1 and fd 1 itself is pointed at stderr, so a stray ``print`` (ours, a
plugin's, or a child process inheriting fd 1) can never corrupt the protocol stream.
"""

from __future__ import annotations

import asyncio
import io
import os
import signal
import sys
import threading
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, BinaryIO, TextIO

from pi_core.modes.rpc.framing import serialize_json_line

if TYPE_CHECKING:
    from pi_core.session import AgentSession, ModelSource
    from pi_core.ui import Theme

_READ_SIZE = 65536


async def run_rpc_mode(session: AgentSession, *, stdin: BinaryIO | int | asyncio.StreamReader | None = None,
                       stdout: BinaryIO | TextIO | None = None, model_registry: ModelSource | None = None,
                       theme: Theme | None = None) -> int:
    """Serve the RPC protocol for ``session``; returns the exit code (0 after EOF on stdin).

    ``stdin``: a binary file object, a pipe fd number, or an ``asyncio.StreamReader`` (default: the
    process stdin). ``stdout``: a binary or text file object (default: the process stdout).
    ``model_registry``: the models ``get_available_models``/``set_model`` choose from (default:
    ``session.models``, else one built from the session's plugins). ``theme``: what ``ctx.ui.theme`` styles
    with (default: no colour).
    """
    from pi_core.modes.rpc.mode import RpcMode

    restore: Callable[[], None] | None = None
    if stdout is None:
        stdout = protect_stdout()
        restore = _release_stdout
    try:
        mode = RpcMode(session, _writer(stdout), model_registry=model_registry, theme=theme)
        remove_signals = _install_signal_handlers(mode) if stdin is None else (lambda: None)
        try:
            return await mode.serve(_chunk_source(stdin if stdin is not None else sys.stdin.buffer))
        finally:
            remove_signals()
    finally:
        if restore is not None:
            restore()


_claimed: tuple[BinaryIO, int, TextIO] | None = None


def protect_stdout() -> BinaryIO:
    """Reserve the real stdout for protocol lines and send everything else written to fd 1 to stderr.

    Idempotent. The CLI should call this before loading plugins in RPC mode, so even a plugin that
    prints at import time cannot corrupt the stream; ``run_rpc_mode`` calls it anyway.
    """
    global _claimed
    if _claimed is None:
        sys.stdout.flush()
        protocol_fd = os.dup(1)
        saved_fd = os.dup(1)
        os.dup2(2, 1)
        saved_stdout = sys.stdout
        sys.stdout = sys.stderr
        _claimed = (os.fdopen(protocol_fd, "wb", buffering=0), saved_fd, saved_stdout)
    return _claimed[0]


def _release_stdout() -> None:
    global _claimed
    if _claimed is None:
        return
    protocol, saved_fd, saved_stdout = _claimed
    _claimed = None
    sys.stdout = saved_stdout
    os.dup2(saved_fd, 1)
    os.close(saved_fd)
    protocol.close()


def _writer(stdout: BinaryIO | TextIO) -> Callable[[dict[str, Any]], None]:
    """A thread-safe line writer (sync tools may notify the client from worker threads)."""
    lock = threading.Lock()
    is_text = isinstance(stdout, io.TextIOBase)
    broken = False

    def write(value: dict[str, Any]) -> None:
        nonlocal broken
        line = serialize_json_line(value)
        with lock:
            if broken:
                return
            try:
                stdout.write(line if is_text else line.encode("utf-8"))  # type: ignore[arg-type]
                stdout.flush()
            except (BrokenPipeError, ValueError):
                # The client closed its end (ValueError: the file object is closed); stdin EOF follows.
                broken = True

    return write


def _chunk_source(stdin: Any) -> Callable[[], Coroutine[Any, Any, bytes]]:
    if isinstance(stdin, asyncio.StreamReader):
        return lambda: stdin.read(_READ_SIZE)
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[bytes] = asyncio.Queue()
    read = _blocking_reader(stdin)

    def pump() -> None:
        while True:
            try:
                chunk = read()
            except OSError as err:
                print(f"pi: reading stdin failed: {err}", file=sys.stderr, flush=True)
                chunk = b""
            loop.call_soon_threadsafe(queue.put_nowait, chunk)
            if not chunk:
                return

    # A plain daemon thread, not the default executor: asyncio.run waits for executor threads at
    # exit, and this one may sit in read() forever if the client never closes stdin.
    threading.Thread(target=pump, name="pi-rpc-stdin", daemon=True).start()
    return queue.get


def _blocking_reader(stdin: Any) -> Callable[[], bytes]:
    if isinstance(stdin, int):
        return lambda: os.read(stdin, _READ_SIZE)
    try:
        fd = stdin.fileno()
    except (AttributeError, OSError, ValueError):
        fd = None
    if fd is not None:
        return lambda: os.read(fd, _READ_SIZE)
    read1 = getattr(stdin, "read1", None)
    return (lambda: read1(_READ_SIZE)) if callable(read1) else (lambda: stdin.read(_READ_SIZE))


def _install_signal_handlers(mode: Any) -> Callable[[], None]:
    """SIGTERM/SIGHUP: kill the shells we started and shut down like EOF, exiting 143/129."""
    from pi_core.toolkit.procs import kill_all_children

    loop = asyncio.get_running_loop()
    installed = []
    for signum, code in ((getattr(signal, "SIGTERM", None), 143), (getattr(signal, "SIGHUP", None), 129)):
        if signum is None:
            continue

        def on_signal(code: int = code) -> None:
            kill_all_children()
            mode.exit_code = code
            mode.stopping.set()

        try:
            loop.add_signal_handler(signum, on_signal)
        except (NotImplementedError, RuntimeError, ValueError):
            continue  # not the main thread, or a platform without it: default handling stays
        installed.append(signum)

    def remove() -> None:
        for signum in installed:
            loop.remove_signal_handler(signum)

    return remove


__all__ = ["protect_stdout", "run_rpc_mode"]
