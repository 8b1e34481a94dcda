"""What both mechanisms share: the private temp dir, the environment, the path rules, the notes on failures."""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import threading

from pi_plugins.sandbox.rules import PathRules

from pi_core.toolkit.sandbox import SandboxPolicy, Spawn

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from pi_plugins.sandbox.proxy import HostProxy

    from pi_core.toolkit.sandbox import Access

# Variables that hand a sandboxed process the user's keys through an agent (the SSH agent's socket).
_AGENT_VARIABLES = ("SSH_AUTH_SOCK", "SSH_AGENT_PID", "GPG_AGENT_INFO")
_PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")
# What a command prints when the kernel refused it something the sandbox forbids.
_REFUSALS = re.compile(r"Read-only file system|Permission denied|Operation not permitted|Network is unreachable|"
                       r"Could not resolve host|Temporary failure in name resolution|Name or service not known|"
                       r"Invalid cross-device link|No address associated|Connection refused", re.IGNORECASE)
# Inside the sandbox's network namespace the bridge to pi's proxy listens here.
PROXY_PORT = 3128


class BaseSandbox:
    """A sandbox for ``policy``; subclasses say how a process is started inside it (``confine``)."""

    mechanism = ""

    def __init__(self, policy: SandboxPolicy) -> None:
        self.policy = policy
        self.home: str | None = None  # pi's own folder for this sandbox: the private temp dir, the proxy socket
        self.tmp: str | None = None
        self.proxy: HostProxy | None = None
        self.rules = PathRules(policy, self.writable_roots())
        self._lock = threading.Lock()

    # --- life --------------------------------------------------------------------------------------------

    def start(self) -> None:
        self.home = tempfile.mkdtemp(prefix="pi-sandbox-")
        if self.policy.mode == "workspace-write":
            self.tmp = os.path.join(self.home, "tmp")
            os.mkdir(self.tmp, 0o700)
        if isinstance(self.policy.network, tuple):
            from pi_plugins.sandbox.proxy import HostProxy

            self.proxy = HostProxy(os.path.join(self.home, "proxy.sock"), self.policy.network)
            self.proxy.start()
        self.rules = PathRules(self.policy, self.writable_roots())

    def close(self) -> None:
        with self._lock:
            proxy, home, self.proxy, self.home = self.proxy, self.home, None, None
        if proxy is not None:
            proxy.stop()
        if home is not None:
            shutil.rmtree(home, ignore_errors=True)

    # --- the policy, resolved --------------------------------------------------------------------------------

    def writable_roots(self) -> tuple[str, ...]:
        if self.policy.mode != "workspace-write":
            return ()
        roots = self.policy.writable_roots + ((self.tmp,) if self.tmp else ())
        return tuple(dict.fromkeys(roots))

    def existing(self, paths: tuple[str, ...]) -> list[str]:
        return [p for p in paths if os.path.lexists(p)]

    def describe(self) -> str:
        return f"{self.policy.describe()} ({self.mechanism})"

    def env(self, env: Mapping[str, str] | None) -> dict[str, str]:
        """The environment inside the sandbox: no agent sockets; the private temp dir; the proxy, if any."""
        out = {k: v for k, v in (os.environ if env is None else env).items() if k not in _AGENT_VARIABLES}
        if self.tmp is not None:
            out["TMPDIR"] = self.tmp
        if self.proxy is not None:
            url = f"http://127.0.0.1:{PROXY_PORT}"
            out.update(dict.fromkeys(_PROXY_VARIABLES, url))
            out.pop("NO_PROXY", None)
            out.pop("no_proxy", None)
        return out

    # --- the file tools --------------------------------------------------------------------------------------

    def check_path(self, path: str, access: Access) -> None:
        self.rules.check(path, access)

    def check_fd(self, fd: int, path: str, access: Access) -> None:
        self.rules.check_fd(fd, path, access)

    def confine(self, argv: list[str], env: Mapping[str, str] | None, *, inline: bool) -> Spawn:
        raise NotImplementedError

    def explain(self, output: str) -> str | None:
        """A note under a failed command's output when the failure looks like the sandbox's doing."""
        tail = output[-4000:]
        # bubblewrap hides a protected directory: reading in it says "No such file or directory"
        if not _REFUSALS.search(tail) and not any(entry in tail for entry in self.policy.deny_read):
            return None
        roots = self.writable_roots()
        writes = f"may write only under {', '.join(roots)}" if roots else "may write nothing"
        network = self.policy.network
        net = ("has no network" if network == "off" else "has the network" if network == "on"
               else "reaches only " + ", ".join(network) + " (through pi's proxy)")
        return (f"[pi's sandbox ({self.mechanism}, {self.policy.mode}): this command {writes}, {net}, and cannot "
                f"read {', '.join(self.policy.deny_read)}. An error above may be the sandbox refusing it.]")
