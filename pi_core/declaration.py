"""What a session has told JSON/RPC clients about its prompt and tools: Pi 1.6.0's ``system`` message.

A session's first run declares every prompt section and tool; a later run declares only what changed since
(sections whose text changed, ``None`` for one that went, tools added or redefined, tools removed), and
nothing when nothing did. Replaying the messages in order yields the current prompt and tools.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pi_core.tools import Tool
    from pi_core.types import SystemMessage


class Declarations:
    def __init__(self) -> None:
        self.content: str | None = None  # None: nothing declared yet
        self.sections: dict[str, str] = {}
        self.tools: dict[str, dict[str, Any]] = {}  # name -> declaration JSON

    def reset(self) -> None:
        """A new or switched session: its first run declares everything again."""
        self.content, self.sections, self.tools = None, {}, {}

    def patch(self, prompt: str, sections: dict[str, str] | None, tools: list[Tool]) -> SystemMessage | None:
        """The message declaring ``prompt`` (in ``sections`` when they compose it, else as ``content``: a plugin's
        own prompt text) and ``tools``; None when the clients already know them."""
        from pi_core.types import SystemMessage, ToolReference

        content = "" if sections is not None else prompt
        sections = sections or {}
        definitions = {tool.name: tool.definition() for tool in tools}
        declared = {name: definition.to_json() for name, definition in definitions.items()}
        first = self.content is None
        changed: dict[str, str | None] = {name: text for name, text in sections.items()
                                          if first or self.sections.get(name) != text}
        changed.update({name: None for name in self.sections if name not in sections})
        added = [definitions[name] for name, spec in declared.items() if first or self.tools.get(name) != spec]
        removed = [name for name, spec in self.tools.items() if declared.get(name) != spec]
        content_changed = content != (self.content or "")
        if not first and not changed and not added and not removed and not content_changed:
            return None
        self.content, self.sections, self.tools = content, dict(sections), declared
        return SystemMessage(
            content=content if first or content_changed else "",
            sections=changed if changed or first else None,
            tools_added=added if added or first else None,
            tools_removed=[ToolReference(name=name) for name in removed] or None)
