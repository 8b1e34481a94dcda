"""The sandbox the model's commands run in: its policy, and the slot the toolkit consults (docs/sandbox.md).

pi never confines itself: the policy applies to the processes the toolkit spawns (``bash``, ``!cmd``, ripgrep,
MCP stdio servers) and to the file tools' reads and writes. Start-up (``pi_core.app.sandbox_start``) builds
the policy, lets ``pi_sandbox_policy`` tighten it and a plugin's ``pi_sandbox`` enforce it, then ``activate``s
the result; every spawn and file access asks ``active()``, so with no sandbox nothing changes. A tool that
touches files on its own calls ``check_path`` first.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from pi_core.errors import PiError, ToolError

TYPE_CHECKING = False  # typing's, without importing typing (pi_core/__init__.py says why)
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Literal, Protocol

    Access = Literal["read", "write"]
    Network = str | tuple[str, ...]  # "off", "on", or the hosts a proxy lets through

    class Sandbox(Protocol):
        """What ``pi_sandbox`` returns: a mechanism that enforces ``policy``."""

        policy: SandboxPolicy
        mechanism: str  # "bubblewrap", "landlock", ...

        def describe(self) -> str:
            """One line for ``pi plugins`` and the start-up header: mode, mechanism, network."""
            ...

        def start(self) -> None:
            """Make what the policy needs (a private temp dir, the network proxy); called once, by ``activate``."""
            ...

        def close(self) -> None: ...

        def check_path(self, path: str, access: Access) -> None:
            """Raise ``SandboxDenied`` unless a file tool may ``access`` ``path`` (resolved: ``..``, symlinks,
            hard links, ``/proc/self/root``, bind mounts)."""
            ...

        def check_fd(self, fd: int, path: str, access: Access) -> None:
            """The same check on what an open descriptor really names (a symlink swapped after
            ``check_path`` is caught here)."""
            ...

        def confine(self, argv: list[str], env: Mapping[str, str] | None, *, inline: bool) -> Spawn:
            """How to start ``argv`` inside the sandbox. ``inline`` callers honour ``Spawn.preexec_fn``
            (``subprocess.Popen``); others (the MCP SDK) get a plain command line."""
            ...

        def explain(self, output: str) -> str | None:
            """A note for a failed command whose output looks like the sandbox stopped it, else None."""
            ...

MODES = ("off", "read-only", "workspace-write")
MECHANISMS = ("auto", "bubblewrap", "landlock")
# What the model's commands may not read unless the user says otherwise (plus pi's own auth.json).
DEFAULT_DENY_READ = ("~/.ssh", "~/.aws", "~/.config/gcloud", "~/.gnupg")
_MODE_RANK = {"off": 0, "workspace-write": 1, "read-only": 2}


class SandboxDenied(ToolError):
    """The sandbox refused a file tool's access; the text says what was blocked and why."""


class SandboxError(PiError):
    """A sandbox that was asked for cannot run: a bad setting, no mechanism on this machine. pi does not start."""


@dataclass(frozen=True, repr=False)
class Spawn:
    """A process start as the sandbox rewrote it."""

    argv: list[str]
    env: dict[str, str] | None
    preexec_fn: Callable[[], None] | None = None


@dataclass(frozen=True)
class SandboxPolicy:
    """What the model's processes and file tools may do. Paths are absolute and resolved.

    ``writable_roots`` count only in ``workspace-write`` (the workspace first); ``network`` is "off", "on" or
    the host patterns (``example.com``, ``*.example.com``) a proxy lets through; ``deny_read`` can be neither
    read nor written. ``source`` names where the mode came from, for messages.
    """

    mode: str = "off"
    workspace: str = ""
    writable_roots: tuple[str, ...] = ()
    network: Network = "off"
    deny_read: tuple[str, ...] = ()
    mechanism: str = "auto"
    source: str = "default"

    @property
    def confining(self) -> bool:
        return self.mode != "off"

    def describe(self) -> str:
        network = self.network if isinstance(self.network, str) else "only " + ", ".join(self.network)
        return f"{self.mode}, network {network}" if self.confining else "off"

    def _roots(self) -> tuple[str, ...] | None:
        """Where writing is allowed; None: anywhere."""
        return None if self.mode == "off" else () if self.mode == "read-only" else self.writable_roots

    def _net(self) -> Network:
        return "on" if self.mode == "off" else self.network

    def meet(self, other: SandboxPolicy) -> SandboxPolicy:
        """The strictest of both: what each forbids stays forbidden (``pi_sandbox_policy`` never loosens)."""
        mode = max(self.mode, other.mode, key=_MODE_RANK.__getitem__)
        mine, theirs = self._roots(), other._roots()
        if mine is None or theirs is None:
            roots = theirs if mine is None else mine
        else:
            roots = tuple(dict.fromkeys([r for r in theirs if within_any(r, mine)] +
                                        [r for r in mine if within_any(r, theirs)]))
        return replace(self, mode=mode, writable_roots=roots or (), network=_meet_network(self._net(), other._net()),
                       deny_read=tuple(dict.fromkeys(self.deny_read + other.deny_read)),
                       mechanism=self.mechanism if self.mechanism != "auto" else other.mechanism,
                       source=self.source if mode == self.mode else other.source)


def _meet_network(mine: Network, theirs: Network) -> Network:
    if mine == "off" or theirs == "off":
        return "off"
    if isinstance(mine, str) or isinstance(theirs, str):  # one is "on": the other's hosts, or "on"
        return theirs if mine == "on" else mine
    kept = tuple(dict.fromkeys([h for h in theirs if host_allowed(h.removeprefix("*."), mine) or h in mine] +
                               [h for h in mine if host_allowed(h.removeprefix("*."), theirs) or h in theirs]))
    return kept or "off"


def host_allowed(host: str, patterns: tuple[str, ...]) -> bool:
    """Whether ``host`` matches ``example.com`` (that host) or ``*.example.com`` (any host below it)."""
    host = host.lower().rstrip(".")
    for pattern in patterns:
        pattern = pattern.lower().rstrip(".")
        if pattern.startswith("*.") and host.endswith(pattern[1:]) or host == pattern:
            return True
    return False


def within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def within_any(path: str, roots: tuple[str, ...]) -> bool:
    return any(within(path, root) for root in roots)


# --- the process's sandbox -----------------------------------------------------------------------------

_active: Sandbox | None = None


def active() -> Sandbox | None:
    """The sandbox this process runs the model's commands in, or None."""
    return _active


def activate(sandbox: Sandbox | None) -> None:
    """Install ``sandbox`` for the process (closing the one before); None turns confinement off."""
    global _active
    previous, _active = _active, None
    if previous is not None:
        previous.close()
    if sandbox is not None:
        sandbox.start()
        import atexit

        atexit.register(sandbox.close)
    _active = sandbox


def check_path(path: str, access: Access) -> None:
    """Raise ``SandboxDenied`` when the active sandbox forbids a file tool this access (no sandbox: a no-op)."""
    if _active is not None:
        _active.check_path(path, access)


def check_fd(fd: int, path: str, access: Access) -> None:
    if _active is not None:
        _active.check_fd(fd, path, access)


def confine(argv: list[str], env: Mapping[str, str] | None, *, inline: bool = True) -> Spawn:
    """``argv`` and ``env`` as the active sandbox starts them (unchanged without one)."""
    if _active is None:
        return Spawn(argv, dict(env) if env is not None else None)
    return _active.confine(argv, env, inline=inline)
