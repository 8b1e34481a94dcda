"""sandbox: confine what the model runs (bash, ``!cmd``, ripgrep, MCP stdio servers) and what the file tools
touch, with bubblewrap or Landlock (docs/sandbox.md). Off unless ``--sandbox`` or ``sandbox.mode`` asks."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from pi_core import hookimpl

if TYPE_CHECKING:
    from pi_core.toolkit.sandbox import Sandbox, SandboxPolicy

INSTALL_HINT = "install bubblewrap (apt install bubblewrap, dnf install bubblewrap)"


@hookimpl(trylast=True)
def pi_sandbox(policy: SandboxPolicy) -> Sandbox:
    """bubblewrap where it can make its namespaces, else Landlock; ``SandboxError`` saying why when neither."""
    from pi_core.toolkit.sandbox import SandboxError

    asked = f"sandbox mode {policy.mode} was asked for ({policy.source})"
    refusal = ("pi does not run the model's commands unconfined; start with --sandbox off to run without "
               "a sandbox")
    if sys.platform != "linux":
        raise SandboxError(f"{asked}, but pi's sandbox needs Linux (bubblewrap or Landlock) and this is "
                           f"{sys.platform}; {refusal}.")
    reasons = []
    if policy.mechanism in ("auto", "bubblewrap"):
        from pi_plugins.sandbox.bwrap import BubblewrapSandbox, find_bwrap, probe

        bwrap = find_bwrap()
        why = probe(bwrap) if bwrap is not None else f"bwrap is not on PATH ({INSTALL_HINT})"
        if why is None:
            assert bwrap is not None
            return BubblewrapSandbox(policy, bwrap)
        reasons.append(f"bubblewrap: {why}")
    if policy.mechanism in ("auto", "landlock"):
        from pi_plugins.sandbox.landlock import LandlockSandbox, problem

        why = problem(policy)
        if why is None:
            return LandlockSandbox(policy)
        reasons.append(f"Landlock: {why}")
    raise SandboxError(f"{asked}, but it cannot be enforced here: {'; '.join(reasons)}. {refusal}.")
