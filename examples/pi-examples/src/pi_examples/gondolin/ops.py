"""The built-in tools' file and shell operations on a Gondolin VM, and the host-to-guest path mapping."""

from __future__ import annotations

import os
import posixpath
import threading
from collections.abc import Callable, Iterator

from pi_core.signals import AbortSignal
from pi_core.toolkit.fileops import (
    EditOperations,
    LsOperations,
    ReadOperations,
    WriteOperations,
)
from pi_core.toolkit.globs import compile_glob
from pi_core.toolkit.procs import ExecAborted, ExecOptions, ExecTimedOut

from .bridge import VmClient

GUEST_WORKSPACE = "/workspace"
SKIPPED_DIRS = frozenset({".git", "node_modules"})


def _inside(root: str, path: str) -> bool:
    relative = os.path.relpath(path, root)
    return relative == "." or not (relative == ".." or relative.startswith(".." + os.sep))


def to_guest_path(host_cwd: str, path: str) -> str:
    """Where ``path`` (relative to the guest workspace, or absolute) lives in the guest: anything under the host
    cwd maps into /workspace, other absolute paths are the guest's own."""
    trimmed = path.strip().removeprefix("@")
    if not trimmed:
        return GUEST_WORKSPACE
    if os.path.isabs(trimmed):
        if _inside(host_cwd, trimmed):
            relative = os.path.relpath(trimmed, host_cwd).replace(os.sep, "/")
            return GUEST_WORKSPACE if relative == "." else posixpath.join(GUEST_WORKSPACE, relative)
        return posixpath.normpath(posixpath.join("/", trimmed.replace(os.sep, "/")))
    return posixpath.normpath(posixpath.join(GUEST_WORKSPACE, trimmed.replace(os.sep, "/")))


class VmFiles(ReadOperations, WriteOperations, EditOperations, LsOperations):
    """read, write, edit and ls on the guest file system; every path goes through ``to_guest_path``."""

    def __init__(self, vm: VmClient, host_cwd: str) -> None:
        self.vm, self.host_cwd = vm, host_cwd

    def guest(self, path: str) -> str:
        return to_guest_path(self.host_cwd, path)

    def access(self, path: str) -> None:
        self.vm.access(self.guest(path))

    def read_file(self, path: str) -> bytes:
        return self.vm.read_file(self.guest(path))

    def write_file(self, path: str, content: bytes) -> None:
        self.vm.write_file(self.guest(path), content)

    def mkdir(self, path: str) -> None:
        self.vm.mkdir(self.guest(path))

    def exists(self, path: str) -> bool:
        try:
            self.vm.access(self.guest(path))
        except OSError:
            return False
        return True

    def is_dir(self, path: str) -> bool:
        return self.vm.stat(self.guest(path)).is_dir()

    def list_dir(self, path: str) -> list[str]:
        return self.vm.list_dir(self.guest(path))


def tool_glob(pattern: str) -> Callable[[str], bool]:
    """Like the built-in find and grep: a pattern with ``/`` matches the path relative to the search root, one
    without matches the file name at any depth."""
    normalized = pattern.replace(os.sep, "/")
    while normalized.startswith("./"):
        normalized = normalized[2:]
    regex = compile_glob(normalized)
    if "/" in normalized:
        return lambda relative: regex.match(relative) is not None
    return lambda relative: regex.match(posixpath.basename(relative)) is not None


def walk_files(vm: VmClient, root: str, signal: AbortSignal | None = None) -> Iterator[tuple[str, str]]:
    """(guest path, path relative to ``root``) of every file under ``root`` (``root`` itself if it is a file),
    skipping .git and node_modules and entries that cannot be stat'ed."""
    if not vm.stat(root).is_dir():
        yield root, posixpath.basename(root)
        return
    pending = [(root, "")]
    while pending:
        directory, relative_dir = pending.pop()
        if signal is not None:
            signal.raise_if_aborted()
        subdirs = []
        for name in vm.list_dir(directory):
            if name in SKIPPED_DIRS:
                continue
            guest = posixpath.join(directory, name)
            relative = posixpath.join(relative_dir, name) if relative_dir else name
            try:
                is_dir = vm.stat(guest).is_dir()
            except OSError:
                continue
            if is_dir:
                subdirs.append((guest, relative))
            else:
                yield guest, relative
        pending.extend(reversed(subdirs))  # depth first, in listing order, like the recursive walk


class VmFind:
    """find's operations: a walk of the guest tree matched with the tool's glob rules."""

    def __init__(self, vm: VmClient, host_cwd: str) -> None:
        self.files = VmFiles(vm, host_cwd)

    def exists(self, path: str) -> bool:
        return self.files.exists(path)

    def glob(self, pattern: str, cwd: str, ignore: list[str], limit: float) -> list[str]:
        matches = tool_glob(pattern)
        found: list[str] = []
        for guest, relative in walk_files(self.files.vm, self.files.guest(cwd)):
            if len(found) >= limit:
                break
            if matches(relative):
                found.append(guest)
        return found


class VmShell:
    """Shell operations in the guest: ``<shell> -lc COMMAND`` in the guest folder mapped from ``cwd``."""

    def __init__(self, vm: VmClient, host_cwd: str, shell_path: str) -> None:
        self.vm, self.host_cwd, self.shell_path = vm, host_cwd, shell_path

    def exec(self, command: str, cwd: str, options: ExecOptions) -> int | None:
        if options.signal is not None and options.signal.aborted:
            raise ExecAborted()
        stop = AbortSignal()
        unlink = options.signal.add_callback(stop.abort) if options.signal is not None else (lambda: None)
        timed_out = threading.Event()

        def time_out() -> None:
            timed_out.set()
            stop.abort()

        timer = None
        if options.timeout and options.timeout > 0:
            timer = threading.Timer(options.timeout, time_out)
            timer.daemon = True
            timer.start()
        try:
            code = self.vm.exec([self.shell_path, "-lc", command], cwd=to_guest_path(self.host_cwd, cwd),
                                env=options.env, on_stdout=options.on_data, on_stderr=options.on_data, signal=stop)
        finally:
            if timer is not None:
                timer.cancel()
            unlink()
        if options.signal is not None and options.signal.aborted:
            raise ExecAborted()
        if timed_out.is_set():
            raise ExecTimedOut(options.timeout or 0)
        return code
