"""The policy as path rules: what the file tools may read and write, and the mounts the mechanisms mask.

Every check works on the resolved path (``..``, symlinks and ``/proc/self/root`` followed by ``realpath``) and
on file identities: a protected directory reached through a bind mount or another name has the same device
and inode, and a hard link to a protected file has the same inode as the file.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass

from pi_core.toolkit.sandbox import SandboxDenied, SandboxPolicy, within, within_any

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pi_core.toolkit.sandbox import Access

# A protected directory bigger than this is not searched for hard links (its other names are then missed).
_MAX_SCANNED = 20_000


@dataclass(frozen=True)
class Mount:
    """One line of ``/proc/self/mountinfo``: where it is mounted and which directory of its file system it shows."""

    point: str
    root: str
    device: str


def mounts() -> list[Mount]:
    """This process's mounts (empty where ``/proc`` is missing)."""
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="surrogateescape") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return []
    found = []
    for line in lines:
        fields = line.split()
        if len(fields) >= 5:
            found.append(Mount(_unescape(fields[4]), _unescape(fields[3]), fields[2]))
    return found


def _unescape(field: str) -> str:
    """mountinfo writes space, tab, newline and backslash as octal escapes (``\\040``)."""
    if "\\" not in field:
        return field
    out, i = [], 0
    while i < len(field):
        if field[i] == "\\" and field[i + 1:i + 4].isdigit():
            out.append(chr(int(field[i + 1:i + 4], 8)))
            i += 4
        else:
            out.append(field[i])
            i += 1
    return "".join(out)


def aliases(path: str, table: list[Mount]) -> list[str]:
    """Every place ``path`` can be reached through a mount (itself included): a bind mount of it or of a
    directory above it shows it again elsewhere."""
    home = max((m for m in table if within(path, m.point)), key=lambda m: len(m.point), default=None)
    if home is None:
        return [path]
    inner = os.path.normpath(home.root + "/" + path[len(home.point):].lstrip("/"))  # its path in its file system
    found = [path]
    for mount in table:
        if mount.device != home.device:
            continue
        if within(mount.root, inner):
            found.append(mount.point)  # the mount shows part of it
        elif within(inner, mount.root):
            found.append(os.path.normpath(mount.point + "/" + inner[len(mount.root):].lstrip("/")))
    return list(dict.fromkeys(found))


def inner_mounts(roots: tuple[str, ...], table: list[Mount]) -> list[str]:
    """Mount points inside writable roots that are no writable root themselves: each may show a directory
    from elsewhere, so they stay read-only."""
    return [m.point for m in table if any(within(m.point, r) and m.point != r for r in roots)
            and m.point not in roots]


class PathRules:
    """The in-process half of the sandbox: raises ``SandboxDenied`` for what a file tool may not do."""

    def __init__(self, policy: SandboxPolicy, writable: tuple[str, ...]) -> None:
        self.policy = policy
        self.writable = writable  # the policy's roots plus the sandbox's private temp dir

    def check(self, path: str, access: Access) -> None:
        self._check(path, os.path.realpath(path), access)

    def check_fd(self, fd: int, path: str, access: Access) -> None:
        try:
            real = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            return  # no /proc: the path check before the open stands
        if real.startswith("/"):
            self._check(path, real.removesuffix(" (deleted)"), access)

    def _check(self, shown: str, real: str, access: Access) -> None:
        shown_real = "" if real == os.path.abspath(shown) else f" (it resolves to {real})"
        entry = self.protected(real)
        if entry is not None:
            raise SandboxDenied(f"blocked by the sandbox: {shown}{shown_real} is protected ({entry} is in "
                                "sandbox.denyRead): it can be neither read nor written.")
        if access == "read":
            return
        if self.policy.mode == "read-only":
            raise SandboxDenied(f"blocked by the sandbox: write in read-only mode: {shown}{shown_real} cannot be "
                                "written (sandbox mode read-only lets commands and file tools write nothing).")
        if not within_any(real, self.writable):
            raise SandboxDenied(f"blocked by the sandbox: write outside the workspace: {shown}{shown_real} is not "
                                f"under {', '.join(self.writable)} (sandbox mode workspace-write). Write inside "
                                "the workspace, or ask the user to add the directory to sandbox.writableRoots.")
        crossed = [m for m in inner_mounts(self.writable, mounts()) if within(real, m)]
        if crossed:
            raise SandboxDenied(f"blocked by the sandbox: write outside the workspace: {shown} is on {crossed[0]}, "
                                "a mount inside the workspace that may show a directory from elsewhere.")
        try:
            info = os.lstat(real)
        except OSError:
            return
        if stat.S_ISREG(info.st_mode) and info.st_nlink > 1:
            raise SandboxDenied(f"blocked by the sandbox: {shown} has {info.st_nlink} hard links, so writing it "
                                "could change a file outside the workspace. Write a new file instead (cp it, "
                                "then edit the copy).")

    def protected(self, real: str) -> str | None:
        """The ``deny_read`` entry ``real`` falls under (by path, by the identity of a directory above it,
        or as a hard link of a protected file), or None."""
        deny = self.policy.deny_read
        for entry in deny:
            if within(real, entry):
                return entry
        identities = {}
        for entry in deny:
            try:
                found = os.stat(entry)
            except OSError:
                continue
            identities[(found.st_dev, found.st_ino)] = entry
        if not identities:
            return None
        path, target = real, None
        while True:
            info: os.stat_result | None
            try:
                info = os.stat(path)
            except OSError:
                info = None
            if info is not None:
                target = target or info
                hit = identities.get((info.st_dev, info.st_ino))
                if hit is not None:
                    return hit
            parent = os.path.dirname(path)
            if parent == path:
                break
            path = parent
        if target is not None and stat.S_ISREG(target.st_mode) and target.st_nlink > 1:
            return _linked_entry(target, identities)
        return None


def _linked_entry(target: os.stat_result, identities: dict[tuple[int, int], str]) -> str | None:
    """The protected entry holding another name of ``target``'s inode, if any."""
    wanted = (target.st_dev, target.st_ino)
    scanned = 0
    for key, entry in identities.items():
        if key == wanted:
            return entry
        for folder, _dirs, files in os.walk(entry):
            for name in files:
                scanned += 1
                try:
                    info = os.lstat(os.path.join(folder, name))
                except OSError:
                    continue
                if (info.st_dev, info.st_ino) == wanted:
                    return entry
                if scanned > _MAX_SCANNED:
                    return None
    return None
