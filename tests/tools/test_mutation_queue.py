"""Per-file mutation queue (docs/tools.md#file-mutation-queue): FIFO per real path, parallel across files."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from pi_builtin_tools.edit import TOOL as EDIT

from pi_core.errors import AbortedError
from pi_core.signals import AbortSignal
from pi_core.toolkit.mutation_queue import (
    file_mutation,
    file_mutation_async,
    mutation_key,
    pending_keys,
    with_file_mutation_queue,
    with_file_mutation_queue_async,
)
from pi_core.tools import ToolContext


def test_many_parallel_edits_of_one_file_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "slots.txt"
    path.write_text("".join(f"slot {i}: empty\n" for i in range(60)))

    def fill(i: int) -> None:
        ctx = ToolContext(cwd=tmp_path)
        EDIT.execute({"path": "slots.txt", "edits": [{"oldText": f"slot {i}: empty", "newText": f"slot {i}: done"}]},
                     ctx)

    with ThreadPoolExecutor(max_workers=16) as pool:
        list(pool.map(fill, range(60)))
    assert path.read_text() == "".join(f"slot {i}: done\n" for i in range(60))
    assert pending_keys() == []


def test_read_modify_write_counter_under_contention(tmp_path: Path) -> None:
    path = tmp_path / "counter"
    path.write_text("0")

    def bump() -> None:
        with file_mutation(path):
            value = int(path.read_text())
            path.write_text(str(value + 1))

    threads = [threading.Thread(target=bump) for _ in range(50)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert path.read_text() == "50"


def test_fifo_order(tmp_path: Path) -> None:
    path = tmp_path / "f"
    order: list[int] = []
    gate = threading.Event()
    started: list[threading.Event] = []

    def first() -> None:
        with file_mutation(path):
            gate.wait()
            order.append(0)

    holder = threading.Thread(target=first)
    holder.start()
    while mutation_key(path) not in pending_keys():
        gate.wait(0.001)
    threads = []
    for i in range(1, 6):
        # Queue one waiter at a time so call order is known, then check service order.
        event = threading.Event()
        started.append(event)
        thread = threading.Thread(target=lambda i=i: with_file_mutation_queue(path, lambda: order.append(i)))
        thread.start()
        threads.append(thread)
        _wait_queue_length(path, i + 1)
    gate.set()
    holder.join()
    for thread in threads:
        thread.join()
    assert order == [0, 1, 2, 3, 4, 5]


def _wait_queue_length(path: Path, length: int) -> None:
    from pi_core.toolkit import mutation_queue

    ready = threading.Event()
    while True:
        with mutation_queue._lock:
            queue = mutation_queue._queues.get(mutation_key(path))
            if queue is not None and len(queue) >= length:
                return
        ready.wait(0.001)


def test_different_files_run_in_parallel(tmp_path: Path) -> None:
    both_inside = threading.Barrier(2, timeout=5)

    def hold(name: str) -> None:
        with file_mutation(tmp_path / name):
            both_inside.wait()  # raises BrokenBarrierError if the two were serialised

    threads = [threading.Thread(target=hold, args=(n,)) for n in ("a", "b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not both_inside.broken


def test_symlink_and_target_share_a_queue(tmp_path: Path) -> None:
    target = tmp_path / "real.txt"
    target.write_text("x")
    (tmp_path / "link.txt").symlink_to(target)
    assert mutation_key(tmp_path / "link.txt") == mutation_key(target)
    assert mutation_key(tmp_path / "sub" / ".." / "real.txt") == mutation_key(target)
    # A file that does not exist yet still gets a stable absolute key.
    assert mutation_key("relative/new.txt").endswith("relative/new.txt")


def test_failure_releases_the_slot(tmp_path: Path) -> None:
    path = tmp_path / "f"
    with pytest.raises(ValueError):
        with_file_mutation_queue(path, lambda: (_ for _ in ()).throw(ValueError("boom")))
    assert pending_keys() == []
    assert with_file_mutation_queue(path, lambda: 42) == 42


def test_abort_while_waiting(tmp_path: Path) -> None:
    path = tmp_path / "f"
    signal = AbortSignal()
    release = threading.Event()
    inside = threading.Event()
    errors: list[BaseException] = []

    def holder() -> None:
        with file_mutation(path):
            inside.set()
            release.wait()

    def waiter() -> None:
        try:
            with file_mutation(path, signal):
                errors.append(AssertionError("got the slot after abort"))
        except AbortedError as err:
            errors.append(err)

    first = threading.Thread(target=holder)
    first.start()
    inside.wait()
    second = threading.Thread(target=waiter)
    second.start()
    _wait_queue_length(path, 2)
    signal.abort()
    second.join()
    assert len(errors) == 1 and isinstance(errors[0], AbortedError) and str(errors[0]) == "Operation aborted"
    release.set()
    first.join()
    assert pending_keys() == []


def test_already_aborted_signal_fails_without_queueing(tmp_path: Path) -> None:
    signal = AbortSignal()
    signal.abort()
    with pytest.raises(AbortedError), file_mutation(tmp_path / "f", signal):
        pass
    assert pending_keys() == []


def test_asyncio_tasks_and_threads_share_the_queue(tmp_path: Path) -> None:
    path = tmp_path / "counter"
    path.write_text("0")

    def bump_sync() -> None:
        with file_mutation(path):
            path.write_text(str(int(path.read_text()) + 1))

    async def bump_async() -> None:
        async with file_mutation_async(path):
            value = int(path.read_text())
            await asyncio.sleep(0)  # let other tasks run while the slot is held
            path.write_text(str(value + 1))

    async def main() -> None:
        threads = [asyncio.to_thread(bump_sync) for _ in range(20)]
        tasks = [bump_async() for _ in range(20)]
        await asyncio.gather(*threads, *tasks)
        assert await with_file_mutation_queue_async(path, _read_async(path)) == "40"

    asyncio.run(main())
    assert pending_keys() == []


def _read_async(path: Path) -> Any:
    async def read() -> str:
        return path.read_text()

    return read


def test_cancelled_async_waiter_leaves_the_queue(tmp_path: Path) -> None:
    path = tmp_path / "f"

    async def main() -> None:
        async with file_mutation_async(path):
            waiter = asyncio.ensure_future(with_file_mutation_queue_async(path, _read_async(path)))
            await asyncio.sleep(0)
            waiter.cancel()
            with pytest.raises(asyncio.CancelledError):
                await waiter
        assert pending_keys() == []

    asyncio.run(main())
