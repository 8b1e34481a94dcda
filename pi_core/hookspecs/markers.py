"""The hook markers and ``spec``, which declares a hook together with its calling policy."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import pluggy

from pi_core.registry import Policy, PolicyKind

__all__ = ["F", "Policy", "PolicyKind", "hookimpl", "hookspec", "spec"]

hookspec = pluggy.HookspecMarker("pi")
hookimpl = pluggy.HookimplMarker("pi")

F = TypeVar("F", bound=Callable[..., Any])


def spec(kind: PolicyKind, *, chain: str | None = None) -> Callable[[F], F]:
    """Declare a hook with its calling policy."""

    def mark(function: F) -> F:
        function.pi_policy = Policy(kind, chain)  # type: ignore[attr-defined]
        return hookspec(firstresult=kind == "first")(function)

    return mark

