"""How tools are presented while codemode is active (``codemode.mode``, ``codemode.inlineBudget``): the codemode
description with the tools a script can call, grouped by namespace (an MCP server) within a token budget, and,
in mode ``on``, a note on each declared tool saying what it resolves to in a script."""

from __future__ import annotations

import math
import weakref
from dataclasses import dataclass
from typing import Any

from pi_plugins.codemode.declarations import (
    TEXT_OUTPUT,
    Declaration,
    js_identifier,
    schema_type,
)
from pi_plugins.codemode.texts import GLOBALS, INTRO

from pi_core.tools import Tool

NAME = "codemode"
CHARS_PER_TOKEN = 4
DEFAULT_INLINE_BUDGET = 3000
NOT_CALLABLE = frozenset([NAME, "tool_search"])  # tools for the model only
# The declared tools mode ``only`` took off the model's list, per session: scripts still call them.
HIDDEN: weakref.WeakKeyDictionary[Any, set[str]] = weakref.WeakKeyDictionary()

@dataclass(frozen=True)
class Namespace:
    name: str
    description: str | None = None


def namespace_of(tool: Any) -> Namespace | None:
    """An MCP tool's server (``mcp__<server>__<tool>``); other tools have none."""
    parts = tool.name.split("__")
    if len(parts) >= 3 and parts[0] == "mcp":
        return Namespace(parts[1])
    return None


def declaration(tool: Any) -> Declaration:
    """The tool as scripts see it: its prompt guidelines as bullets after the description (the system prompt's
    rules cover only declared tools)."""
    bullets = [f"- {g.strip()}" for g in getattr(tool, "prompt_guidelines", None) or [] if g.strip()]
    description = f"{tool.description.strip()}\n\n" + "\n".join(bullets) if bullets else tool.description
    return Declaration(tool.name, description, tool.json_schema, getattr(tool, "output_schema", None) or TEXT_OUTPUT)


def _fields(schema: Any, depth: int) -> str | None:
    """``{ a, b?, kind: "x" }``: the names of an object's properties, one level of nesting deep."""
    if not isinstance(schema, dict) or schema.get("type") != "object" or not isinstance(schema.get("properties"), dict):
        return None
    required = set(schema.get("required") or [])
    parts = []
    for name, field in schema["properties"].items():
        const = field.get("const") if isinstance(field, dict) else None
        nested = schema_type({"const": const}) if const is not None else (_fields(field, depth - 1) if depth > 0 else None)
        parts.append(f"{name}{'' if name in required else '?'}{f': {nested}' if nested else ''}")
    return "{ " + ", ".join(parts) + " }"


def _output_text(name: str, schema: Any) -> str:
    typed = schema_type(schema)
    if typed == "string":
        return "a string"
    fields = _fields(schema, 1)
    variants = (schema.get("anyOf") or schema.get("oneOf")) if isinstance(schema, dict) else None
    if fields is None and isinstance(variants, list):
        described = [_fields(v, 0) for v in variants]
        fields = " | ".join(d for d in described if d) if described and all(described) else None
    if fields:
        return f"`{fields}`"
    return f'a value; `await describeTool("{name}")` shows its type' if "\n" in typed else f"`{typed}`"


def script_note(tool: Any) -> str:
    """What mode ``on`` appends to a declared tool's description."""
    schema = getattr(tool, "output_schema", None) or TEXT_OUTPUT
    return f"Codemode: `tools.{js_identifier(tool.name)}(args)` resolves to {_output_text(tool.name, schema)}."


def _shown(groups: list[tuple[Namespace | None, list[tuple[str, str, int]]]], budget: int | None) -> set[str]:
    """The cheapest declarations of each group in turn until the budget is spent, so every namespace shows some."""
    if budget is None:
        return {name for _, entries in groups for name, _, _ in entries}
    queues = [sorted(entries, key=lambda e: e[2]) for _, entries in groups]
    shown: set[str] = set()
    remaining = budget
    active = [q for q in queues if q]
    while active:
        still = []
        for queue in active:
            name, _, cost = queue[0]
            if cost > remaining:
                continue
            remaining -= cost
            shown.add(name)
            queue.pop(0)
            if queue:
                still.append(queue)
        active = still
    return shown


def description(listed: list[Any], deferred: set[str], budget: int | None) -> str:
    """The codemode tool's description: the script API, then the listed tools by namespace."""
    groups: dict[str, tuple[Namespace | None, list[tuple[str, str, int]]]] = {"": (None, [])}
    for tool in listed:
        if tool.name in deferred:
            continue
        namespace = namespace_of(tool)
        key = f"ns:{namespace.name}" if namespace else ""
        section = declaration(tool).section()
        groups.setdefault(key, (namespace, []))[1].append((tool.name, section, math.ceil(len(section) / CHARS_PER_TOKEN)))
    sections = [INTRO, GLOBALS]
    if not any(entries for _, entries in groups.values()):
        return "\n\n".join(sections)
    ordered = sorted(groups.values(), key=lambda g: "" if g[0] is None else "\0" + g[0].name)
    shown = _shown(ordered, budget)
    tool_sections = ["Nested tools:"]
    for namespace, entries in ordered:
        visible = [e for e in entries if e[0] in shown]
        if namespace is not None:
            listing = "" if len(visible) == len(entries) else " (tools not listed)" if not visible \
                else " (some tools not listed)"
            about = f"\n{namespace.description.strip()}" if namespace.description else ""
            tool_sections.append(f"## {namespace.name}{listing}{about}")
        tool_sections.extend(section for _, section, _ in visible)
    sections.append("\n\n".join(tool_sections))
    return "\n\n".join(sections)


def callable_tools(all_tools: list[Any], declared: list[str], hidden: set[str]) -> list[Any]:
    """What scripts may call: the declared tools (also those mode ``only`` hides) and every tool that is not
    declared directly (``deferred``: MCP tools under ``codemode`` exposure among them)."""
    names = set(declared) | hidden
    return [t for t in all_tools if t.name not in NOT_CALLABLE and (t.name in names or t.exposure != "direct")]


def with_note(tool: Tool) -> Tool:
    """A copy of a declared tool whose description ends with the codemode note (the original kept on it)."""
    from dataclasses import replace

    original = original_of(tool)
    copy = replace(original, description=f"{original.description.strip()}\n\n{script_note(original)}")
    copy.__dict__["codemode_original"] = original
    return copy


def original_of(tool: Any) -> Any:
    return getattr(tool, "__dict__", {}).get("codemode_original", tool)
