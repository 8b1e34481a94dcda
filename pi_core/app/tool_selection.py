"""Which tools exist and which are active for a run (docs/cli.md#tool-selection, with pi's strict ``--tools``)."""

from __future__ import annotations

from dataclasses import dataclass

from pi_core.errors import PiError
from pi_core.registry import Registry
from pi_core.tools import Tool

# Activation order of the built-in tools (the system prompt and the request list them in this order).
BUILTIN_ORDER = ("read", "bash", "edit", "write", "grep", "find", "ls", "powershell")


@dataclass
class ToolSelection:
    available: dict[str, Tool]  # what exists this run (after --tools / --exclude-tools)
    active: list[Tool]  # what the model sees, in order


class UnknownToolError(PiError):
    pass


def _ordered(registry: Registry) -> list[Tool]:
    tools = registry.tools.items
    first = [tools[n] for n in BUILTIN_ORDER if n in tools]
    rest = [t for n, t in tools.items() if n not in BUILTIN_ORDER]
    return first + rest


def is_builtin(registry: Registry, name: str) -> bool:
    owner = registry.tools.owner.get(name)
    return owner is not None and registry.plugins.layer_of(owner) == "builtin"


def select_tools(registry: Registry, *, allow: list[str] | None = None, no_tools: bool = False,
                 no_builtin: bool = False, exclude: list[str] | None = None,
                 default_names: list[str] | None = None) -> ToolSelection:
    """Apply the tool flags. Unknown names in ``allow``/``exclude`` raise, listing the known tools."""
    ordered = _ordered(registry)
    known = [t.name for t in ordered]
    for names in (allow, exclude):
        unknown = [n for n in names or [] if n not in registry.tools.items]
        if unknown:
            raise UnknownToolError(
                f"Unknown tool{'s' if len(unknown) > 1 else ''}: {', '.join(unknown)}. "
                f"Known tools: {', '.join(known)}")
    if allow is not None:
        chosen = [registry.tools.items[n] for n in dict.fromkeys(allow)]
        available = {t.name: t for t in chosen}
        active = list(chosen)
    elif no_tools:
        available, active = {}, []
    else:
        available = {t.name: t for t in ordered}
        if default_names is not None:
            active = [available[n] for n in default_names if n in available]
        else:
            active = [t for t in ordered if (t.active_by_default if is_builtin(registry, t.name) else True)]
        if no_builtin:
            active = [t for t in active if not is_builtin(registry, t.name)]
    if exclude:
        available = {n: t for n, t in available.items() if n not in exclude}
        active = [t for t in active if t.name not in exclude]
    return ToolSelection(available, active)
