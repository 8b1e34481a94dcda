"""Which tools exist and which are active for a run: ``--tools``, ``--exclude-tools``, ``--no-tools``,
``--no-builtin-tools`` and ``defaultTools`` (docs/cli.md#tool-selection: Pi 1.6's grammar, pi's strict names).

Entries are exact names or patterns where ``*`` matches any characters. A list of only ``+name``/``-name``
entries changes the default selection instead of replacing it. A plain name that matches no registered tool
is an error (Pi ignores it); patterns and MCP names are not, since MCP tools appear as their servers connect.
MCP tools are kept by an allowlist unless one of its entries starts with ``mcp__``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from pi_core.errors import PiError
from pi_core.registry import Registry
from pi_core.tools import Tool

# Activation order of the built-in tools (the system prompt and the request list them in this order).
BUILTIN_ORDER = ("read", "bash", "edit", "write", "grep", "find", "ls", "powershell")

MCP_PREFIX = "mcp__"
MCP_RESOURCE_TOOLS = ("list_mcp_resources", "list_mcp_resource_templates", "read_mcp_resource")
TOOL_SEARCH = "tool_search"
ANY_MCP_TOOL = "mcp__\0__\0"  # matched only by patterns that match every server tool, such as mcp__*: those
# exclusions remove the resource tools too, which count as MCP tools


class UnknownToolError(PiError):
    pass


def is_mcp_tool_name(name: str) -> bool:
    """A server tool (``mcp__<server>__<tool>``) or one of the MCP resource tools."""
    return name.startswith(MCP_PREFIX) or name in MCP_RESOURCE_TOOLS


def is_modifier(entry: str) -> bool:
    return entry.startswith(("+", "-"))


class NameMatcher:
    """Exact names and ``*`` patterns, as ``--tools``, ``--exclude-tools`` and ``toolExposure`` take them."""

    def __init__(self, entries: list[str]) -> None:
        self.names = {e for e in entries if "*" not in e}
        self.patterns = [re.compile("^" + ".*".join(re.escape(p) for p in e.split("*")) + "$")
                         for e in entries if "*" in e]

    def __call__(self, name: str) -> bool:
        return name in self.names or any(p.match(name) for p in self.patterns)


def apply_modifiers(base: list[str], entries: list[str]) -> list[str]:
    """``+name`` adds a tool to ``base`` and ``-name`` removes one, in order."""
    names = list(base)
    for entry in entries:
        name = entry[1:]
        if entry.startswith("+") and name and name not in names:
            names.append(name)
        elif entry.startswith("-") and name in names:
            names.remove(name)
    return names


def check_tool_list(entries: list[str]) -> None:
    """Pi's rule for a ``--tools`` list: plain names and patterns, or only ``+name``/``-name`` exact names."""
    modifiers = [e for e in entries if is_modifier(e)]
    if not modifiers:
        return
    if len(modifiers) < len(entries):
        raise PiError("Invalid tools option: tool names cannot be mixed with +name or -name entries")
    pattern = next((e for e in modifiers if "*" in e), None)
    if pattern is not None:
        raise PiError(f"Invalid tools option: +name and -name entries take exact tool names, not patterns: {pattern}")


@dataclass(eq=False, repr=False)
class ToolPolicy:
    """The selection as rules, so tools that appear while the session runs (MCP) follow it too."""

    allow: NameMatcher | None = None
    allow_filters_mcp: bool = False
    exclude: NameMatcher | None = None
    tool_search_available: bool = False

    def allows(self, name: str) -> bool:
        if self.exclude is not None and (self.exclude(name) or (
                name in MCP_RESOURCE_TOOLS and self.exclude(ANY_MCP_TOOL))):
            return False
        if self.allow is None or self.allow(name):
            return True
        return not self.allow_filters_mcp and is_mcp_tool_name(name)

    def may_declare(self, tool: Tool) -> bool:
        """An MCP tool the allowlist keeps without naming it is only for ``tool_search`` to load."""
        if self.allow is None or self.allow(tool.name) or not is_mcp_tool_name(tool.name):
            return True
        return tool.exposure != "direct" and self.tool_search_available


@dataclass(eq=False, repr=False)
class ToolSelection:
    """The tools of a run: those that exist, those the model sees, and the policy that chose."""

    available: dict[str, Tool]  # what exists this run (after --tools / --exclude-tools)
    active: list[Tool]  # what the model sees, in order
    policy: ToolPolicy = field(default_factory=ToolPolicy)


def _ordered(registry: Registry) -> list[Tool]:
    tools = registry.tools.items
    first = [tools[n] for n in BUILTIN_ORDER if n in tools]
    rest = [t for n, t in tools.items() if n not in BUILTIN_ORDER]
    return first + rest


def is_builtin(registry: Registry, name: str) -> bool:
    owner = registry.tools.owner.get(name)
    return owner is not None and registry.plugins.layer_of(owner) == "builtin"


def _check_known(registry: Registry, entries: list[str], known: list[str]) -> None:
    names = [e[1:] if is_modifier(e) else e for e in entries]
    unknown = [n for n in names
               if n and "*" not in n and not is_mcp_tool_name(n) and n not in registry.tools.items]
    if unknown:
        raise UnknownToolError(
            f"Unknown tool{'s' if len(unknown) > 1 else ''}: {', '.join(unknown)}. Known tools: {', '.join(known)}")


def _default_active(registry: Registry, ordered: list[Tool], default_names: list[str] | None) -> list[str]:
    builtin_defaults = [t.name for t in ordered if (t.active_by_default and t.exposure == "direct"
                                                     if is_builtin(registry, t.name) else t.exposure == "direct")]
    if default_names is None:
        return builtin_defaults
    if default_names and all(is_modifier(n) for n in default_names):
        return apply_modifiers(builtin_defaults, default_names)
    return [n for n in default_names if not is_modifier(n)]


def select_tools(registry: Registry, *, allow: list[str] | None = None, no_tools: bool = False,
                 no_builtin: bool = False, exclude: list[str] | None = None,
                 default_names: list[str] | None = None) -> ToolSelection:
    """Apply the tool flags. Plain names that match no tool raise, listing the known tools."""
    ordered = _ordered(registry)
    known = [t.name for t in ordered]
    if allow is not None:
        check_tool_list(allow)
    for entries in (allow, exclude):
        _check_known(registry, entries or [], known)
    modifiers = allow if allow and all(is_modifier(e) for e in allow) else None
    defaults = [] if no_tools else _default_active(registry, ordered, default_names)
    if modifiers is not None:
        selected = apply_modifiers(defaults, modifiers)
        allow_entries: list[str] | None = selected if no_tools else None
    else:
        selected = None
        allow_entries = allow if allow is not None else ([] if no_tools else None)
    policy = ToolPolicy(
        allow=NameMatcher(allow_entries) if allow_entries is not None else None,
        allow_filters_mcp=allow_entries is not None and (
            not allow_entries or any(e.startswith(MCP_PREFIX) for e in allow_entries)),
        exclude=NameMatcher(exclude) if exclude else None,
    )
    available = {t.name: t for t in ordered if policy.allows(t.name)}
    policy.tool_search_available = TOOL_SEARCH in available
    if allow is not None and modifiers is None:
        matcher = NameMatcher(allow)
        # An exact name activates its tool whatever its exposure; a pattern picks only direct tools.
        active_names = [n for n in dict.fromkeys(allow) if "*" not in n and n in available]
        active_names += [t.name for t in ordered if t.name not in active_names and t.exposure == "direct"
                         and matcher(t.name) and t.name in available]
    else:
        active_names = selected if selected is not None else defaults
        if no_builtin:
            active_names = [n for n in active_names if not is_builtin(registry, n)]
    active = [available[n] for n in active_names if n in available and policy.may_declare(available[n])]
    return ToolSelection(available, active, policy)
