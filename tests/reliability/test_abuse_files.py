"""Hostile files and file systems for the file tools, through the agent loop: FIFOs, devices, symlink
loops, invalid UTF-8, a file or its directory deleted mid-edit, a full disk. Every call ends in a clear
result and the file holds the old content or the complete new one."""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from pi_builtin_tools.edit import create_edit_tool

from pi_core.toolkit.fileops import LocalEditOperations
from pi_core.types import ToolResultMessage

from .harness import check_every_call_answered, run_tool_calls


def one(calls: list[tuple[str, dict[str, Any]]], root: Path, **kw: Any) -> list[ToolResultMessage]:
    return check_every_call_answered(run_tool_calls(calls, root, **kw), len(calls))


def test_fifo_and_endless_devices_are_refused_not_waited_on(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "zero").symlink_to("/dev/zero")
    calls = [("read", {"path": "fifo"}), ("edit", {"path": "fifo", "edits": [{"oldText": "a", "newText": "b"}]}),
             ("write", {"path": "fifo", "content": "x"}), ("read", {"path": "zero"}),
             ("edit", {"path": "zero", "edits": [{"oldText": "a", "newText": "b"}]})]
    results = one(calls, tmp_path)
    for result in results:
        assert result.is_error and "Not a regular file" in result.text(), result.text()
    assert (tmp_path / "zero").is_symlink() and (tmp_path / "fifo").exists()


def test_grep_and_find_refuse_fifos_and_devices_and_skip_them_inside_folders(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "zero").symlink_to("/dev/zero")
    (tmp_path / "d").mkdir()
    os.mkfifo(tmp_path / "d" / "pipe")
    (tmp_path / "d" / "a.txt").write_text("needle\n")
    calls = [("grep", {"pattern": "x", "path": "fifo"}), ("grep", {"pattern": "x", "path": "zero"}),
             ("find", {"pattern": "*", "path": "fifo"}), ("find", {"pattern": "*", "path": "zero"}),
             ("grep", {"pattern": "needle", "path": "d"}), ("grep", {"pattern": "needle", "glob": "*"}),
             ("find", {"pattern": "*", "path": "d"})]
    grep_fifo, grep_zero, find_fifo, find_zero, grep_dir, grep_glob, find_dir = one(calls, tmp_path)
    for refused in (grep_fifo, grep_zero):
        assert refused.is_error and "Not a regular file" in refused.text(), refused.text()
    for refused in (find_fifo, find_zero):
        assert refused.is_error and refused.text().startswith("Not a directory: "), refused.text()
    assert grep_dir.text() == "a.txt:1: needle" and "d/a.txt:1: needle" in grep_glob.text()
    assert "a.txt" in find_dir.text().splitlines()


def test_symlink_loops(tmp_path: Path) -> None:
    (tmp_path / "loop").symlink_to("loop")
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "f.txt").write_text("needle\n")
    (tmp_path / "d" / "up").symlink_to("..")  # a directory cycle
    calls = [("read", {"path": "loop"}), ("write", {"path": "loop", "content": "x"}),
             ("edit", {"path": "loop", "edits": [{"oldText": "a", "newText": "b"}]}), ("ls", {"path": "loop"}),
             ("grep", {"pattern": "needle"}), ("find", {"pattern": "**/*.txt"}), ("ls", {"path": "d/up/d/up/d"})]
    read, write, edit, ls_loop, grep, find, ls_cycle = one(calls, tmp_path)
    assert "ELOOP" in read.text() and "ELOOP" in write.text() and "ELOOP" in edit.text()
    assert ls_loop.is_error
    assert "d/f.txt" in grep.text() and grep.text().count("needle") == 1  # the cycle is not followed
    assert find.text().strip() == "d/f.txt"
    assert not ls_cycle.is_error and "f.txt" in ls_cycle.text()
    assert (tmp_path / "loop").is_symlink()


def test_invalid_utf8_survives_an_edit_elsewhere(tmp_path: Path) -> None:
    raw = b"head \xff\xfe\x80 \xc3( tail\nchange me\n\xed\xa0\x80 end\n"
    (tmp_path / "bad.txt").write_bytes(raw)
    (result,) = one([("edit", {"path": "bad.txt", "edits": [{"oldText": "change me", "newText": "changed"}]})],
                    tmp_path)
    assert not result.is_error, result.text()
    assert (tmp_path / "bad.txt").read_bytes() == raw.replace(b"change me", b"changed")
    (read,) = one([("read", {"path": "bad.txt"})], tmp_path)
    assert not read.is_error and "changed" in read.text()


class DeletingOps(LocalEditOperations):
    """Deletes the file (or its whole directory) right after edit has read it."""

    def __init__(self, what: str) -> None:
        self.what = what

    def read_file(self, path: str) -> bytes:
        data = super().read_file(path)
        if self.what == "file":
            os.unlink(path)
        else:
            shutil.rmtree(os.path.dirname(path))
        return data


def test_file_deleted_mid_edit_is_written_whole(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("one\ntwo\n")
    tool = create_edit_tool(DeletingOps("file"))
    (result,) = one([("edit", {"path": "f.txt", "edits": [{"oldText": "two", "newText": "TWO"}]})], tmp_path,
                    replace=[tool])
    # the edit that was in flight lands whole (as in any editor that saves after a delete)
    assert not result.is_error
    assert (tmp_path / "f.txt").read_text() == "one\nTWO\n"
    assert [p.name for p in tmp_path.iterdir()] == ["f.txt"]


def test_directory_deleted_mid_edit_ends_in_an_error(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "f.txt").write_text("one\ntwo\n")
    tool = create_edit_tool(DeletingOps("dir"))
    (result,) = one([("edit", {"path": "d/f.txt", "edits": [{"oldText": "two", "newText": "TWO"}]})], tmp_path,
                    replace=[tool])
    assert result.is_error and "ENOENT" in result.text()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("tool", ["edit", "write"])
def test_disk_full_mid_write_keeps_the_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tool: str) -> None:
    (tmp_path / "f.txt").write_text("one\ntwo\n")

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", full)
    args = {"path": "f.txt", "content": "new " * 1000} if tool == "write" else \
        {"path": "f.txt", "edits": [{"oldText": "two", "newText": "TWO"}]}
    (result,) = one([(tool, args)], tmp_path)
    assert result.is_error and "ENOSPC" in result.text(), result.text()
    assert (tmp_path / "f.txt").read_text() == "one\ntwo\n"
    assert [p.name for p in tmp_path.iterdir()] == ["f.txt"]  # the temp file is gone
