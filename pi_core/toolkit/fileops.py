"""File-system backends for the file tools, and an atomic write that never leaves a half-written file.

Each tool takes an operations object (``ReadOperations`` for read, ``EditOperations`` for edit, ...).
``LocalFileOperations`` implements them all on the local disk; a plugin that wants the same tool on a
remote host or in a container subclasses the interface it needs and passes an instance to the tool's
``create_*_tool(operations=...)`` factory. Methods are synchronous (tools run in worker threads) and
fail by raising ``OSError`` with ``errno`` set, so the tools can word the error the way Pi does.
"""

from __future__ import annotations

import errno
import io
import os
import stat
import threading
from abc import ABC, abstractmethod
from typing import BinaryIO

from pi_core.toolkit.sandbox import check_fd, check_path

# Node's wording for the errors users meet most; others fall back to the C library's text.
_NODE_MESSAGES = {
    errno.ENOENT: "no such file or directory",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.EISDIR: "illegal operation on a directory",
    errno.ENOTDIR: "not a directory",
    errno.EEXIST: "file already exists",
    errno.ENOSPC: "no space left on device",
    errno.EROFS: "read-only file system",
    errno.ELOOP: "too many symbolic links encountered",
    errno.ENAMETOOLONG: "name too long",
}


def error_code(err: BaseException) -> str | None:
    """The symbolic errno name of an OSError (``ENOENT``), or None."""
    number = getattr(err, "errno", None)
    return errno.errorcode.get(number) if isinstance(number, int) else None


def node_error_message(err: OSError, syscall: str, path: str) -> str:
    """``ENOENT: no such file or directory, access '/abs/path'``: the text Pi's tools show for OS errors."""
    code = error_code(err)
    if code is None:
        return str(err)
    text = (_NODE_MESSAGES.get(err.errno) if err.errno is not None else None) or (err.strerror or code).lower()
    return f"{code}: {text}, {syscall} '{path}'"


def os_error(number: int, path: str) -> OSError:
    return OSError(number, os.strerror(number), path)


# --- interfaces ------------------------------------------------------------------------------------


class ReadOperations(ABC):
    """What ``read`` needs. Override ``open_file`` too if the backend can stream (big files)."""

    @abstractmethod
    def access(self, path: str) -> None:
        """Raise OSError unless ``path`` exists and is readable."""

    @abstractmethod
    def read_file(self, path: str) -> bytes:
        """The whole file."""

    def open_file(self, path: str) -> BinaryIO:
        """A binary stream of the file, read front to back; the default reads it all first."""
        return io.BytesIO(self.read_file(path))

    def exists(self, path: str) -> bool:
        """Used to try macOS spellings of a file name; the default asks ``access``."""
        try:
            self.access(path)
        except OSError:
            return False
        return True


class WriteOperations(ABC):
    """What ``write`` needs."""

    @abstractmethod
    def write_file(self, path: str, content: bytes) -> None:
        """Replace the file's content (create it if missing)."""

    @abstractmethod
    def mkdir(self, path: str) -> None:
        """Create the directory and its parents; no error if it exists."""


class EditOperations(ABC):
    """What ``edit`` needs."""

    @abstractmethod
    def access(self, path: str) -> None:
        """Raise OSError unless ``path`` exists and is readable and writable."""

    @abstractmethod
    def read_file(self, path: str) -> bytes: ...

    @abstractmethod
    def write_file(self, path: str, content: bytes) -> None: ...


class LsOperations(ABC):
    """What ``ls`` needs."""

    @abstractmethod
    def exists(self, path: str) -> bool: ...

    @abstractmethod
    def is_dir(self, path: str) -> bool:
        """Whether ``path`` (symlinks followed) is a directory; raise OSError if it cannot be stat'ed."""

    @abstractmethod
    def list_dir(self, path: str) -> list[str]:
        """Entry names, without ``.`` and ``..``."""


class LocalFileOperations(ReadOperations, WriteOperations, LsOperations):
    """The read, write and ls interfaces on the local disk; writes go through ``atomic_write``."""

    def access(self, path: str) -> None:
        check_path(path, "read")
        try:
            os.stat(path)
        except OSError as err:  # keeps the real reason: ELOOP for a symlink loop, not ENOENT
            raise os_error(err.errno or errno.ENOENT, path) from err
        if not os.access(path, os.R_OK):
            raise os_error(errno.EACCES, path)

    def access_rw(self, path: str) -> None:
        check_path(path, "write")
        LocalFileOperations.access(self, path)
        if not os.access(path, os.W_OK):
            raise os_error(errno.EACCES, path)

    def read_file(self, path: str) -> bytes:
        with open_regular_file(path) as handle:
            return handle.read()

    def open_file(self, path: str) -> BinaryIO:
        return open_regular_file(path)

    def write_file(self, path: str, content: bytes) -> None:
        atomic_write(path, content)

    def mkdir(self, path: str) -> None:
        if not os.path.isdir(path):  # an existing directory is no write (write's parent may be read-only)
            check_path(path, "write")
        os.makedirs(path, exist_ok=True)

    def exists(self, path: str) -> bool:
        check_path(path, "read")
        return os.path.exists(path)

    def is_dir(self, path: str) -> bool:
        check_path(path, "read")
        return stat.S_ISDIR(os.stat(path).st_mode)

    def list_dir(self, path: str) -> list[str]:
        check_path(path, "read")
        return os.listdir(path)


class LocalEditOperations(LocalFileOperations, EditOperations):
    """Local edit backend: ``access`` also demands write permission."""

    def access(self, path: str) -> None:
        self.access_rw(path)


LOCAL = LocalFileOperations()


def special_file_error(path: str) -> Exception:
    """The ToolError for a FIFO, socket or device where a tool wanted a regular file (read, grep)."""
    from pi_core.errors import ToolError

    return ToolError(f"Not a regular file: {path}. It is a FIFO, socket or device, which would block or "
                     "never end; use bash to read from it (e.g. head -c 1000).")


def open_regular_file(path: str) -> BinaryIO:
    """Open a regular file for reading. A FIFO, socket or device is refused: reading one blocks forever
    (a FIFO with no writer) or never ends (``/dev/zero``), and a tool thread cannot be interrupted.
    A sandbox checks the path, then what was opened (a symlink swapped in between is caught)."""

    check_path(path, "read")
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # O_NONBLOCK: opening a FIFO must not wait for a writer
    try:
        check_fd(fd, path, "read")
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise os_error(errno.EISDIR, path)
        if not stat.S_ISREG(mode):
            raise special_file_error(path)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "rb")


# --- atomic write ------------------------------------------------------------------------------------

_umask_lock = threading.Lock()


def _current_umask() -> int:
    # Linux reports it without changing it; setting it (the only portable way) is visible to other threads.
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    with _umask_lock:
        mask = os.umask(0o077)
        os.umask(mask)
    return mask


def atomic_write(path: str, data: bytes) -> None:
    """Replace ``path`` with ``data`` so that readers and crashes see the old file or the new one, never half.

    The data goes to a temporary file in the same directory, is flushed to disk and renamed over the
    target. An existing file keeps its permission bits (and owner, where allowed); a symlink keeps
    pointing at the file it names, which is the one rewritten. Where no temporary file can be made
    next to the target (a read-only directory holding a writable file), or the file has several hard
    links that a rename would split, it is written in place instead.
    """
    import tempfile

    check_path(path, "write")
    target = os.path.realpath(path)
    try:
        st: os.stat_result | None = os.stat(target)
    except FileNotFoundError:
        st = None
    if st is not None and stat.S_ISFIFO(st.st_mode):
        from pi_core.errors import ToolError

        raise ToolError(f"Not a regular file: {path}. It is a FIFO, and writing to one blocks until a reader "
                        "comes; use bash to write to it.")
    if st is not None and (st.st_nlink > 1 or not stat.S_ISREG(st.st_mode)):
        _write_in_place(target, data)
        return
    directory = os.path.dirname(target) or "."
    try:
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{os.path.basename(target)}.", suffix=".tmp")
    except PermissionError:
        if st is None:
            raise
        _write_in_place(target, data)
        return
    try:
        with os.fdopen(fd, "wb") as handle:
            check_fd(fd, tmp, "write")  # where the file was really made (a directory swapped meanwhile)
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if st is not None:
            os.chmod(tmp, stat.S_IMODE(st.st_mode))
            if (st.st_uid, st.st_gid) != (os.getuid(), os.getgid()):
                try:
                    os.chown(tmp, st.st_uid, st.st_gid)
                except PermissionError:
                    pass  # not root: the file becomes ours, as with any editor that saves by rename
        else:
            os.chmod(tmp, 0o666 & ~_current_umask())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def _write_in_place(path: str, data: bytes) -> None:
    with open(path, "wb") as handle:
        handle.write(data)
