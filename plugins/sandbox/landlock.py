"""Landlock: the kernel's own access control, applied to each command (and inherited by all it starts).

Uses ``landlockpy`` (typed, dependency-free bindings of all Landlock ABIs). A ruleset grants rights and
cannot take them back below a granted directory, so the protected paths are left out by granting read on
every sibling along the way to them instead. Files and TCP only: no host allow-list (that needs
bubblewrap's network namespace and pi's proxy).
"""

from __future__ import annotations

import json
import os
import sys
import threading
from dataclasses import dataclass

from pi_plugins.sandbox.base import BaseSandbox
from pi_plugins.sandbox.rules import aliases, mounts

from pi_core.toolkit.sandbox import SandboxPolicy, Spawn, within

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from landlockpy import Ruleset

# Devices a command may write though the file system is read-only for it.
_DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/ptmx", "/dev/pts")


def abi() -> int:
    try:
        import landlockpy
    except ImportError:
        return -1
    return landlockpy.abi_version()


def problem(policy: SandboxPolicy) -> str | None:
    """Why Landlock cannot enforce ``policy`` here, or None."""
    version = abi()
    if version < 0:
        return "the landlockpy package is not installed"
    if version == 0:
        return "this kernel has no Landlock (or it is disabled at boot)"
    if isinstance(policy.network, tuple):
        return (f"sandbox.network lists hosts ({', '.join(policy.network)}), which needs bubblewrap's network "
                'namespace and pi\'s proxy; Landlock can only cut TCP entirely: set sandbox.network to "off" or "on"')
    if policy.network == "off" and version < 4:
        return f'this kernel\'s Landlock (ABI {version}) cannot block TCP; set sandbox.network = "on" to go without'
    return None


@dataclass(frozen=True)
class Plan:
    """What a ruleset grants, as plain data (the MCP launcher receives it as JSON)."""

    writable: tuple[str, ...]
    deny: tuple[str, ...]
    network_off: bool

    def to_json(self) -> str:
        return json.dumps({"writable": self.writable, "deny": self.deny, "network_off": self.network_off})

    @classmethod
    def from_json(cls, text: str) -> Plan:
        data = json.loads(text)
        return cls(tuple(data["writable"]), tuple(data["deny"]), bool(data["network_off"]))


def build_ruleset(plan: Plan) -> tuple[Ruleset, list[tuple[str, int]]]:
    """The ruleset for ``plan`` and the directories it listed, with their mtimes (a new entry in one of
    them needs a new ruleset: it would not be readable)."""
    from landlockpy import AccessFS, AccessNet, Ruleset, Scope, fs_for_abi, net_for_abi

    version = abi()
    everything = fs_for_abi(version)
    read_dir = AccessFS.READ_FILE | AccessFS.READ_DIR | AccessFS.EXECUTE
    read_file = AccessFS.READ_FILE | AccessFS.EXECUTE
    if version >= 9:
        read_dir |= AccessFS.RESOLVE_UNIX  # named Unix sockets stay reachable, as under bubblewrap
    net = net_for_abi(version) if plan.network_off else AccessNet.NONE  # TCP; UDP too where the ABI has it
    ruleset = Ruleset(handled_fs=everything, handled_net=net,
                      scoped=Scope.ABSTRACT_UNIX_SOCKET if plan.network_off else Scope.NONE)
    listed: list[tuple[str, int]] = []

    def grant_read(path: str) -> None:
        if path in plan.deny:
            return
        if not any(within(entry, path) for entry in plan.deny):
            ruleset.allow_path(path, read_dir if os.path.isdir(path) else read_file)
            return
        # A protected path lies below: list this directory and grant each entry but the way there.
        ruleset.allow_path(path, AccessFS.READ_DIR)
        try:
            listed.append((path, os.stat(path).st_mtime_ns))
            entries = list(os.scandir(path))
        except OSError:
            return
        for entry in entries:
            if not entry.is_symlink():  # a link's target is judged where it lives
                try:
                    grant_read(entry.path)
                except OSError:
                    continue  # vanished, or a file type Landlock does not take
    grant_read("/")
    for root in plan.writable:
        ruleset.allow_path(root, everything)
    for device in _DEVICES:
        if os.path.exists(device):
            ruleset.allow_path(device, (AccessFS.READ_FILE | AccessFS.WRITE_FILE | AccessFS.TRUNCATE
                                        | AccessFS.IOCTL_DEV) & everything)
    return ruleset, listed


def restrict(plan: Plan) -> None:
    """Confine this process (the launcher's, before it execs the command)."""
    ruleset, _listed = build_ruleset(plan)
    ruleset.restrict()


class LandlockSandbox(BaseSandbox):
    mechanism = "landlock"

    def __init__(self, policy: SandboxPolicy) -> None:
        super().__init__(policy)
        self._cached: tuple[Plan, Ruleset, list[tuple[str, int]]] | None = None
        self._old: list[Ruleset] = []  # kept open: a process forked a moment ago may still apply one
        self._build_lock = threading.Lock()

    def plan(self) -> Plan:
        table = mounts()
        deny = tuple(dict.fromkeys(place for entry in self.existing(self.policy.deny_read)
                                   for place in aliases(entry, table)))
        return Plan(tuple(self.existing(self.writable_roots())), deny, self.policy.network == "off")

    def ruleset(self) -> Ruleset:
        plan = self.plan()
        with self._build_lock:
            cached = self._cached
            if cached is not None and cached[0] == plan and all(_mtime(p) == m for p, m in cached[2]):
                return cached[1]
            ruleset, listed = build_ruleset(plan)
            if cached is not None:
                self._old.append(cached[1])
            self._cached = (plan, ruleset, listed)
            return ruleset

    def confine(self, argv: list[str], env: Mapping[str, str] | None, *, inline: bool) -> Spawn:
        if inline:
            # Applied in the child between fork and exec: two system calls on a ruleset built here.
            return Spawn(argv, self.env(env), preexec_fn=self.ruleset().restrict)
        return Spawn([sys.executable, "-I", "-m", "pi_plugins.sandbox.launch", self.plan().to_json(), "--", *argv],
                     self.env(env))

    def close(self) -> None:
        with self._build_lock:
            for ruleset in self._old + ([self._cached[1]] if self._cached else []):
                ruleset.close()
            self._old, self._cached = [], None
        super().close()


def _mtime(path: str) -> int | None:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return None
