"""AbortSignal: one cancellation flag that threads, subprocess watchers and asyncio code can all observe."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable

from pi_core.errors import AbortedError


class AbortSignal:
    """Set once by ``abort()``; listeners run exactly once, immediately if already aborted.

    Thread-safe: a sync tool running in a worker thread polls ``aborted`` or registers a callback
    (bash kills its process group from one), while async code awaits ``wait()``.
    """

    def __init__(self) -> None:
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._callbacks: list[Callable[[], None]] = []
        self.reason: str | None = None

    @property
    def aborted(self) -> bool:
        return self._event.is_set()

    def abort(self, reason: str | None = None) -> None:
        with self._lock:
            if self._event.is_set():
                return
            self.reason = reason
            self._event.set()
            callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback()

    def add_callback(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Call ``callback`` on abort (now, if already aborted). Returns a function that unregisters it."""
        with self._lock:
            if not self._event.is_set():
                self._callbacks.append(callback)
                return lambda: self._remove(callback)
        callback()
        return lambda: None

    def _remove(self, callback: Callable[[], None]) -> None:
        with self._lock:
            if callback in self._callbacks:
                self._callbacks.remove(callback)

    def raise_if_aborted(self, message: str = "Operation aborted") -> None:
        if self.aborted:
            raise AbortedError(message)

    def wait_sync(self, timeout: float | None = None) -> bool:
        return self._event.wait(timeout)

    async def wait(self) -> None:
        """Return once aborted; safe to call from any event loop."""
        if self.aborted:
            return
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()

        def wake() -> None:
            wake_soon(loop, future)

        remove = self.add_callback(wake)
        try:
            await future
        finally:
            remove()


def wake_soon(loop: asyncio.AbstractEventLoop, future: asyncio.Future[None]) -> None:
    """From any thread: resolve ``future`` (a waiter of ``loop``) unless it is already done."""

    def resolve() -> None:
        if not future.done():
            future.set_result(None)

    loop.call_soon_threadsafe(resolve)
