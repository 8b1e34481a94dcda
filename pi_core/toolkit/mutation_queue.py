"""One-at-a-time, first-come-first-served access to each file, shared by worker threads and asyncio tasks.

edit and write hold a file's slot for their whole read-modify-write, so two parallel edits of one file
never lose an update, while edits of different files still run side by side. Plugins that change files
should take the same slot (``file_mutation`` in a thread, ``file_mutation_async`` in a coroutine).
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import TYPE_CHECKING, TypeVar

from pi_core.errors import AbortedError
from pi_core.signals import wake_soon

if TYPE_CHECKING:
    from pi_core.signals import AbortSignal

T = TypeVar("T")

_lock = threading.Lock()
_queues: dict[str, deque[_Waiter]] = {}


class _Waiter:
    """One queued mutation; woken (from any thread) when it reaches the head of its file's queue."""

    def __init__(self, loop: asyncio.AbstractEventLoop | None = None) -> None:
        self.granted = False
        self.event = threading.Event()
        self.loop = loop
        self.future: asyncio.Future[None] | None = loop.create_future() if loop else None

    def wake(self) -> None:
        self.granted = True
        self.event.set()
        if self.loop is not None and self.future is not None:
            future = self.future
            wake_soon(self.loop, future)

    def raise_unless_granted(self) -> None:
        """After waking: the slot is held, or the wait was aborted."""
        if not self.granted:
            raise AbortedError("Operation aborted")


def mutation_key(path: str | os.PathLike[str]) -> str:
    """The queue key: the real path, so a symlink and its target share one queue.

    ``realpath`` also resolves the directories of a file that does not exist yet.
    """
    absolute = os.path.abspath(os.fspath(path))
    try:
        return os.path.realpath(absolute)
    except (OSError, ValueError):
        return absolute


def _enqueue(key: str, waiter: _Waiter) -> None:
    with _lock:
        queue = _queues.setdefault(key, deque())
        queue.append(waiter)
        if len(queue) == 1:
            waiter.wake()


def _release(key: str, waiter: _Waiter) -> None:
    """Leave the queue (holding the slot or not) and hand the slot on if this waiter held it."""
    with _lock:
        queue = _queues.get(key)
        if queue is None or waiter not in queue:
            return
        was_head = queue[0] is waiter
        queue.remove(waiter)
        if not queue:
            del _queues[key]
        elif was_head:
            queue[0].wake()


@contextmanager
def _in_queue(path: str | os.PathLike[str], waiter: _Waiter, signal: AbortSignal | None,
              on_abort: Callable[[], None]) -> Iterator[None]:
    """``waiter`` queued for ``path``'s slot while the body waits (and works), ``on_abort`` called if ``signal``
    fires meanwhile; leaving hands the slot on. An already aborted signal queues nothing."""
    key = mutation_key(path)
    if signal is not None:
        signal.raise_if_aborted()
    _enqueue(key, waiter)
    remove = signal.add_callback(on_abort) if signal is not None else (lambda: None)
    try:
        yield
    finally:
        remove()
        _release(key, waiter)


@contextmanager
def file_mutation(path: str | os.PathLike[str], signal: AbortSignal | None = None) -> Iterator[None]:
    """Hold ``path``'s slot for the ``with`` body (blocking; for worker threads).

    Raises ``AbortedError("Operation aborted")`` if ``signal`` fires while still waiting.
    """
    waiter = _Waiter()
    with _in_queue(path, waiter, signal, waiter.event.set):
        waiter.event.wait()
        waiter.raise_unless_granted()
        yield


@asynccontextmanager
async def file_mutation_async(path: str | os.PathLike[str], signal: AbortSignal | None = None) -> AsyncIterator[None]:
    """Hold ``path``'s slot for the ``async with`` body without blocking the event loop."""
    loop = asyncio.get_running_loop()
    waiter = _Waiter(loop)
    future = waiter.future
    assert future is not None
    with _in_queue(path, waiter, signal, lambda: wake_soon(loop, future)):
        await future
        waiter.raise_unless_granted()
        yield


def with_file_mutation_queue(path: str | os.PathLike[str], fn: Callable[[], T],
                             signal: AbortSignal | None = None) -> T:
    """Run ``fn()`` while holding ``path``'s slot (blocking)."""
    with file_mutation(path, signal):
        return fn()


async def with_file_mutation_queue_async(path: str | os.PathLike[str], fn: Callable[[], Awaitable[T]],
                                         signal: AbortSignal | None = None) -> T:
    """Await ``fn()`` while holding ``path``'s slot."""
    async with file_mutation_async(path, signal):
        return await fn()


def pending_keys() -> list[str]:
    """Files that have a mutation running or waiting (empty queues are removed at once)."""
    with _lock:
        return list(_queues)
