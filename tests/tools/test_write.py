"""write tool (docs/tools.md#write), plus atomic replacement, modes, symlinks and the mutation queue."""

from __future__ import annotations

import json
import os
import stat
import threading
from pathlib import Path
from typing import Any, Self

import pytest
from pi_builtin_tools.write import PARAMETERS, TOOL, create_write_tool

from pi_core.errors import AbortedError, ToolError
from pi_core.toolkit.fileops import WriteOperations, atomic_write
from pi_core.toolkit.mutation_queue import file_mutation
from pi_core.tools import ToolContext, ToolResult


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(cwd=tmp_path)


def write(ctx: ToolContext, run_tool: Any, path: str, content: str) -> ToolResult:
    return run_tool(TOOL, {"path": path, "content": content}, ctx)


def test_write_new_file(ctx: ToolContext, run_tool: Any) -> None:
    result = write(ctx, run_tool, "test.txt", "Test content")
    text = result.content[0].text  # type: ignore[union-attr]
    assert "Successfully wrote" in text and "test.txt" in text
    assert text == "Successfully wrote 12 bytes to test.txt"
    assert result.details is None
    assert (ctx.cwd / "test.txt").read_text() == "Test content"


def test_write_creates_parent_directories(ctx: ToolContext, run_tool: Any) -> None:
    write(ctx, run_tool, "nested/dir/test.txt", "x")
    assert (ctx.cwd / "nested" / "dir" / "test.txt").read_text() == "x"


def test_length_is_counted_in_utf16_units(ctx: ToolContext, run_tool: Any) -> None:
    text = write(ctx, run_tool, "u.txt", "h\u00e9\U0001f600").content[0].text  # type: ignore[union-attr]
    assert text == "Successfully wrote 4 bytes to u.txt"
    assert (ctx.cwd / "u.txt").read_bytes() == "h\u00e9\U0001f600".encode()


def test_write_is_verbatim(ctx: ToolContext, run_tool: Any) -> None:
    write(ctx, run_tool, "crlf.txt", "a\r\nb\n\ufeffc")
    assert (ctx.cwd / "crlf.txt").read_bytes() == "a\r\nb\n\ufeffc".encode()


def test_overwrite_keeps_mode(ctx: ToolContext, run_tool: Any) -> None:
    path = ctx.cwd / "script.sh"
    path.write_text("old")
    path.chmod(0o750)
    write(ctx, run_tool, "script.sh", "new")
    assert path.read_text() == "new"
    assert stat.S_IMODE(path.stat().st_mode) == 0o750


def test_new_file_gets_umask_mode(ctx: ToolContext, run_tool: Any) -> None:
    old = os.umask(0o027)
    try:
        write(ctx, run_tool, "fresh.txt", "x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((ctx.cwd / "fresh.txt").stat().st_mode) == 0o640


def test_write_through_symlink_keeps_the_link(ctx: ToolContext, run_tool: Any) -> None:
    target = ctx.cwd / "real.txt"
    target.write_text("old")
    (ctx.cwd / "link.txt").symlink_to(target)
    write(ctx, run_tool, "link.txt", "new")
    assert (ctx.cwd / "link.txt").is_symlink() and target.read_text() == "new"


def test_crash_mid_write_leaves_original_intact(ctx: ToolContext, run_tool: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    path = ctx.cwd / "keep.txt"
    path.write_text("precious original")
    real_fdopen = os.fdopen

    class Exploding:
        def __init__(self, handle: Any) -> None:
            self.handle = handle

        def __enter__(self) -> Self:
            return self

        def __exit__(self, *exc: object) -> None:
            self.handle.close()

        def write(self, data: bytes) -> None:
            self.handle.write(data[: len(data) // 2])  # half the bytes reach the temp file, then the "crash"
            raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "fdopen", lambda fd, mode: Exploding(real_fdopen(fd, mode)))
    with pytest.raises(ToolError, match=r"^EIO: input/output error, open '.*keep\.txt'$"):
        write(ctx, run_tool, "keep.txt", "replacement that never lands " * 100)
    assert path.read_text() == "precious original"
    assert [p.name for p in ctx.cwd.iterdir()] == ["keep.txt"]  # the temp file is gone too


def test_failed_rename_leaves_original_intact(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "f.txt"
    path.write_bytes(b"before")

    def refuse(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(OSError):
        atomic_write(str(path), b"after")
    assert path.read_bytes() == b"before"
    assert [p.name for p in tmp_path.iterdir()] == ["f.txt"]


def test_readers_never_see_a_partial_file(tmp_path: Path) -> None:
    path = tmp_path / "f.txt"
    big_a, big_b = b"a" * 300_000, b"b" * 300_000
    path.write_bytes(big_a)
    seen: set[bytes] = set()
    stop = threading.Event()

    def reader() -> None:
        while not stop.is_set():
            data = path.read_bytes()
            seen.add(data[:1] + data[-1:] + str(len(data)).encode())

    thread = threading.Thread(target=reader)
    thread.start()
    for i in range(30):
        atomic_write(str(path), big_b if i % 2 == 0 else big_a)
    stop.set()
    thread.join()
    assert seen <= {b"aa300000", b"bb300000"}


def test_write_waits_for_the_files_queue(ctx: ToolContext, run_tool: Any) -> None:
    path = ctx.cwd / "q.txt"
    entered = threading.Event()
    release = threading.Event()
    order: list[str] = []

    def holder() -> None:
        with file_mutation(path):
            entered.set()
            release.wait()
            order.append("holder done")

    thread = threading.Thread(target=holder)
    thread.start()
    entered.wait()
    writer = threading.Thread(target=lambda: (write(ctx, run_tool, "q.txt", "x"), order.append("write done")))
    writer.start()
    writer.join(timeout=0.2)
    assert writer.is_alive() and not path.exists()  # still queued behind the holder
    release.set()
    thread.join()
    writer.join()
    assert order == ["holder done", "write done"] and path.read_text() == "x"


def test_abort_before_write(ctx: ToolContext, run_tool: Any) -> None:
    ctx.signal.abort()
    with pytest.raises(AbortedError, match="^Operation aborted$"):
        write(ctx, run_tool, "a.txt", "x")
    assert not (ctx.cwd / "a.txt").exists()


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write anything")
def test_permission_error_wording(ctx: ToolContext, run_tool: Any) -> None:
    locked = ctx.cwd / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        with pytest.raises(ToolError, match=r"^EACCES: permission denied, open '.*locked/f\.txt'$"):
            write(ctx, run_tool, "locked/f.txt", "x")
    finally:
        locked.chmod(0o700)


def test_write_into_a_file_used_as_directory(ctx: ToolContext, run_tool: Any) -> None:
    (ctx.cwd / "plain").write_text("x")
    with pytest.raises(ToolError, match=r"^(EEXIST|ENOTDIR): "):
        write(ctx, run_tool, "plain/sub/f.txt", "x")


class MemoryWriteOps(WriteOperations):
    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}
        self.dirs: list[str] = []

    def write_file(self, path: str, content: bytes) -> None:
        self.files[path] = content

    def mkdir(self, path: str) -> None:
        self.dirs.append(path)


def test_write_on_another_backend(tmp_path: Path, run_tool: Any) -> None:
    ops = MemoryWriteOps()
    run_tool(create_write_tool(ops), {"path": "/srv/app/x.txt", "content": "hi"}, ToolContext(cwd=tmp_path))
    assert ops.files == {"/srv/app/x.txt": b"hi"} and ops.dirs == ["/srv/app"]


def test_registry_serves_write_with_pis_schema() -> None:
    from pi_core.loader.plugins import load_plugins
    from pi_core.registry import build_registry

    registry = build_registry(load_plugins(discover_extensions=False))
    tool = registry.tools.items["write"]
    assert tool.json_schema is PARAMETERS and tool.coercion == "typebox"
    reference = json.loads(Path("/work/shared/spec/reference/pi-tools-all.json").read_text())
    pi = next(t["input_schema"] for t in reference if t["name"] == "write")
    strip = lambda s: {**s, "properties": {k: {"type": v["type"]} for k, v in s["properties"].items()}}
    assert strip(tool.definition().parameters) == strip(pi)
