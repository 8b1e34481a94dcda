"""The hook markers and ``spec``, which declares a hook together with its calling policy.

It imports nothing of pi's: the registry reads the policies from here (``pi_core.registry.PluginSet.call``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

import pluggy

__all__ = ["F", "Policy", "PolicyKind", "hookimpl", "hookspec", "spec"]

hookspec = pluggy.HookspecMarker("pi")
hookimpl = pluggy.HookimplMarker("pi")

F = TypeVar("F", bound=Callable[..., Any])
PolicyKind = Literal["collect", "chain", "notify", "first"]


@dataclass(frozen=True, repr=False)
class Policy:
    """How ``PluginSet.call`` combines a hook's implementations; ``chain`` names the argument each result is
    passed on as."""

    kind: PolicyKind
    chain: str | None = None


def spec(kind: PolicyKind, *, chain: str | None = None) -> Callable[[F], F]:
    """Declare a hook with its calling policy."""

    def mark(function: F) -> F:
        function.pi_policy = Policy(kind, chain)  # type: ignore[attr-defined]
        return hookspec(firstresult=kind == "first")(function)

    return mark

