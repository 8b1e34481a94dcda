"""Hooks of the sandbox the model's commands run in (docs/sandbox.md): tighten its policy, provide the mechanism."""

from __future__ import annotations

from pi_core.hookspecs.markers import spec

__all__ = ["pi_sandbox", "pi_sandbox_policy"]


@spec("chain", chain="policy")
def pi_sandbox_policy(policy: object) -> object:
    """Tighten the sandbox policy (a ``pi_core.toolkit.sandbox.SandboxPolicy``): once per start, before any
    session exists, with the user's (``--sandbox``, the ``sandbox`` settings). Return a changed copy
    (``dataclasses.replace``) or None.

    pi meets the final result with the user's policy, so a plugin can only tighten it: a stricter mode
    (``off`` < ``workspace-write`` < ``read-only``), fewer writable roots, less network, more ``deny_read``;
    anything looser is dropped. Turning ``off`` into a confining mode needs a ``pi_sandbox`` mechanism. A
    raising implementation stops pi from starting (a policy check that fails fails closed).
    """


@spec("first")
def pi_sandbox(policy: object) -> object:
    """Return the ``pi_core.toolkit.sandbox.Sandbox`` that enforces a confining ``policy``: once per start,
    after ``pi_sandbox_policy``.

    The shipped ``sandbox`` plugin answers with bubblewrap or Landlock; a plugin answering first replaces it.
    Raise ``pi_core.toolkit.sandbox.SandboxError`` when the policy cannot be enforced here: pi says why and
    does not start (it never runs the model's commands unconfined when confinement was asked for).
    """
