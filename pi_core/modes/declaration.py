"""What a session has told JSON/RPC clients about its prompt and tools: Pi 1.6.0's ``system`` message.

A session's first run declares every prompt section and tool; a later run declares only what changed since
(sections whose text changed, ``None`` for one that went, tools added or redefined, tools removed), and
nothing when nothing did. Replaying the messages in order yields the current prompt and tools. The
declaration follows a run's first ``turn_start`` and comes before its prompt, as in Pi.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pi_core.events import AgentEvent
from pi_core.types import PiModel, ToolDefinition, now_ms

if TYPE_CHECKING:
    from pi_core.session import AgentSession
    from pi_core.tools import Tool


class ToolReference(PiModel):
    name: str


class SystemMessage(PiModel):
    """Pi 1.6.0's declaration of the prompt and tools. Not part of the transcript: providers get
    ``Context.system_prompt``, and the session file keeps Pi 0.73.1's entries."""

    role: Literal["system"] = "system"
    content: str = ""
    sections: dict[str, str | None] | None = None
    tools_added: list[ToolDefinition] | None = None
    tools_removed: list[ToolReference] | None = None
    timestamp: int


class StreamDeclarer:
    """For a mode's event stream: ``events(event)`` is the event, followed by the ``system`` message when it is
    a run's first ``turn_start`` and the prompt or tools changed. A new session declares everything again."""

    def __init__(self, session: AgentSession) -> None:
        self.session = session
        self.declarations = Declarations()
        self.session_id: object = None
        self.pending = False

    def events(self, event: AgentEvent) -> list[AgentEvent]:
        if event.type == "agent_start":
            self.pending = True
        if event.type != "turn_start" or not self.pending:
            return [event]
        self.pending = False
        session = self.session
        session_id = session.store.session_id if session.store is not None else None
        if session_id != self.session_id:
            self.session_id = session_id
            self.declarations.reset()
        prompt = session.agent.state.system_prompt
        source = session.prompt_source
        message = self.declarations.patch(prompt, source.sections_of(prompt) if source is not None else None,
                                          session.agent.state.tools)
        if message is None:
            return [event]
        return [event, AgentEvent("message_start", message=message), AgentEvent("message_end", message=message)]


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
            timestamp=now_ms(),
            content=content if first or content_changed else "",
            sections=changed if changed or first else None,
            tools_added=added if added or first else None,
            tools_removed=[ToolReference(name=name) for name in removed] or None)
