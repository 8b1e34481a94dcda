"""Names of MCP tools as the model sees them: ``mcp__<server>__<tool>``, sanitised, unique and at most 64 chars."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable

MAX_TOOL_NAME = 64  # providers accept at most 64 characters of [A-Za-z0-9_-]
_UNSAFE = re.compile(r"[^A-Za-z0-9_]")


def tool_name(server: str, tool: str, taken: Callable[[str], bool] = lambda _name: False) -> str:
    """Everything but letters, digits and ``_`` becomes ``_``; a name too long or already ``taken`` by another
    tool gets an 8-character hash of the server and tool names."""
    name = _UNSAFE.sub("_", f"mcp__{server}__{tool}")
    if len(name) <= MAX_TOOL_NAME and not taken(name):
        return name
    digest = hashlib.sha256(f"{server}\0{tool}".encode()).hexdigest()[:8]
    return f"{name[:MAX_TOOL_NAME - len(digest) - 1]}_{digest}"


def assign_names(server: str, tools: list[str], owners: dict[str, str]) -> dict[str, str]:
    """Pi names for one server's tools. ``owners`` maps every pi name in use to its ``server\\0tool``; tools whose
    plain names collide (``a-b`` and ``a_b``) all get the hash, whatever the order the server lists them in."""
    plain = [tool_name(server, t) for t in dict.fromkeys(tools)]
    names: dict[str, str] = {}
    for tool in dict.fromkeys(tools):
        owner = f"{server}\0{tool}"
        chosen = set(names.values())

        def taken(candidate: str, owner: str = owner, chosen: set[str] = chosen) -> bool:
            other = owners.get(candidate)
            return (other is not None and other != owner) or candidate in chosen or plain.count(candidate) > 1

        names[tool] = tool_name(server, tool, taken)
        owners[names[tool]] = owner
    return names


def server_summary(description: str | None, instructions: str | None) -> str:
    """One line for the system prompt: the configured description, else the server's instructions."""
    text = (description or "").strip() or (instructions or "").strip()
    return text.split("\n", 1)[0].strip()
