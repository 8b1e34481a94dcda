"""bubblewrap: each command in its own user, mount (and network) namespace; the file system read-only but the
writable roots, the protected paths hidden, the network cut or routed through pi's host proxy (the run's
shared network namespace, ``netns.py``).

The system's ``bwrap`` is used (the distribution's package: it gets security fixes, and Ubuntu's AppArmor
profile lets exactly that binary create user namespaces). No PID namespace: a daemon a command starts
outlives it as it would unconfined, and stays inside the namespaces it was born in.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

from pi_plugins.sandbox.base import PROXY_PORT, BaseSandbox
from pi_plugins.sandbox.netns import BRIDGE, SharedNetwork
from pi_plugins.sandbox.rules import aliases, inner_mounts, mounts

from pi_core.toolkit.sandbox import SandboxPolicy, Spawn

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

PROBE_TIMEOUT_S = 10.0


def find_bwrap() -> str | None:
    return shutil.which("bwrap")


def probe(bwrap: str) -> str | None:
    """Why ``bwrap`` cannot make the namespaces pi needs as this user (user namespaces may be off, or
    refused to unprivileged users), or None when it can."""
    true = shutil.which("true") or "/bin/true"
    try:
        done = subprocess.run([bwrap, *_namespaces(True), "--ro-bind", "/", "/", "--dev", "/dev", "--", true],
                              stdin=subprocess.DEVNULL, capture_output=True, timeout=PROBE_TIMEOUT_S, check=False)
    except (OSError, subprocess.SubprocessError) as err:
        return f"{bwrap} could not run: {err}"
    if done.returncode == 0:
        return None
    said = done.stderr.decode("utf-8", "replace").strip().splitlines()
    return f"{bwrap} cannot create the namespaces it needs here ({said[-1] if said else f'exit {done.returncode}'})"


def _namespaces(no_network: bool) -> list[str]:
    return ["--unshare-user", "--unshare-ipc", *(["--unshare-net"] if no_network else []), "--cap-drop", "ALL"]


class BubblewrapSandbox(BaseSandbox):
    mechanism = "bubblewrap"

    def __init__(self, policy: SandboxPolicy, bwrap: str) -> None:
        super().__init__(policy)
        self.bwrap = bwrap
        self.network: SharedNetwork | None = None

    def start(self) -> None:
        super().start()
        if self.policy.network != "on":
            self.network = SharedNetwork.begin(self.bwrap, self.proxy.path if self.proxy is not None else None)

    def close(self) -> None:
        network, self.network = self.network, None
        if network is not None:
            network.close()
        super().close()

    def confine(self, argv: list[str], env: Mapping[str, str] | None, *, inline: bool) -> Spawn:
        shared = self.network.enter() if self.network is not None else None
        if shared is not None:
            return Spawn([*shared, self.bwrap, *_namespaces(False), *self.mounts(), "--", *argv], self.env(env))
        command = argv
        if self.proxy is not None:
            # This command's own namespace: a bridge on its loopback hands each connection to pi's proxy.
            command = [sys.executable, "-I", "-S", BRIDGE, self.proxy.path, str(PROXY_PORT), "--", *argv]
        network = self.policy.network
        return Spawn([self.bwrap, *_namespaces(network != "on"), *self.mounts(), "--", *command], self.env(env))

    def mounts(self) -> list[str]:
        """The mount options, in order: everything read-only, the writable roots, then what is hidden."""
        table = mounts()
        roots = self.existing(self.writable_roots())
        args = ["--ro-bind", "/", "/", "--dev", "/dev"]
        for root in roots:
            args += ["--bind", root, root]
        for point in inner_mounts(tuple(roots), table):
            if os.path.isdir(point):
                args += ["--ro-bind", point, point]
        for entry in self.existing(self.policy.deny_read):
            for place in aliases(entry, table):
                if os.path.isdir(place) and not os.path.islink(place):
                    args += ["--tmpfs", place, "--remount-ro", place]
                elif os.path.exists(place):
                    args += ["--ro-bind", "/dev/null", place]
        return args
