"""Session entries as plugins read them (``ctx.session_manager``): one pydantic model per entry type.

The session store keeps each line as the dict it parsed, so a file is written back byte for byte; these
models are the typed reading of those dicts, made when a plugin asks (``entry_from_json``, validated: the
data comes from a file) and cached per entry. Unknown keys are kept (``extra="allow"``), an entry type pi does
not know becomes an ``UnknownEntry``, and ``to_json()`` gives back the very dict the entry was read from.
Field names are Pi's, in snake case (``parentId`` is ``parent_id``); docs/plugins.md#session-entries lists them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import (
    BeforeValidator,
    Discriminator,
    PrivateAttr,
    Tag,
    TypeAdapter,
    ValidationError,
)

from pi_core.session_log import SessionLog
from pi_core.types import (
    AgentMessage,
    ImageContent,
    PiModel,
    TextContent,
    Usage,
    message_from_json,
)

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["BranchSummaryEntry", "CompactionEntry", "CustomEntry", "CustomMessageEntry", "LabelEntry", "MessageEntry",
           "ModelChangeEntry", "SessionEntries", "SessionEntry", "SessionHeader", "SessionInfoEntry", "SessionLog",
           "ThinkingLevelChangeEntry", "UnknownEntry", "entry_from_json"]


class _Record(PiModel):
    """A line of a session file; ``to_json()`` is the dict it was read from (key order and unknown keys kept)."""

    _raw: dict[str, Any] | None = PrivateAttr(default=None)

    def to_json(self) -> dict[str, Any]:
        return dict(self._raw) if self._raw is not None else super().to_json()


class SessionHeader(_Record):
    """The first line: the session's id, format version, working directory and the session it came from."""

    type: Literal["session"] = "session"
    version: int = 1
    id: str
    timestamp: str = ""
    cwd: str = ""
    parent_session: str | None = None


class _Entry(_Record):
    type: str
    id: str
    parent_id: str | None = None
    timestamp: str = ""


class MessageEntry(_Entry):
    """A conversation message: ``message.role`` is "user", "assistant", "toolResult" or an app role
    (``bashExecution``, ``custom``, ...: a ``CustomMessage`` keeping all its fields)."""

    type: Literal["message"] = "message"
    if TYPE_CHECKING:
        message: AgentMessage
    else:  # validated once, by the message's own model (a union would try each role's model in turn)
        # open: to pydantic only, the entry's JSON (message_from_json validates it); type checkers read AgentMessage
        message: Annotated[Any, BeforeValidator(lambda v: message_from_json(v) if isinstance(v, dict) else v)]


class ModelChangeEntry(_Entry):
    type: Literal["model_change"] = "model_change"
    provider: str
    model_id: str


class ThinkingLevelChangeEntry(_Entry):
    type: Literal["thinking_level_change"] = "thinking_level_change"
    thinking_level: str


class CompactionEntry(_Entry):
    """What a compaction stored: the summary replaces everything before ``first_kept_entry_id``."""

    type: Literal["compaction"] = "compaction"
    summary: str
    first_kept_entry_id: str
    tokens_before: int = 0
    details: Any = None  # open: plugin-defined details, kept as the session JSON has them
    from_hook: bool | None = None
    usage: Usage | None = None


class BranchSummaryEntry(_Entry):
    """The summary of a branch left by ``/tree`` (``from_id``: the entry the branch left from)."""

    type: Literal["branch_summary"] = "branch_summary"
    from_id: str
    summary: str
    details: Any = None  # open: plugin-defined details, kept as the session JSON has them
    from_hook: bool | None = None


class CustomEntry(_Entry):
    """A plugin's own state (``ctx.append_entry``): never sent to the model."""

    type: Literal["custom"] = "custom"
    custom_type: str
    data: Any = None  # open: plugin-defined data, kept as the session JSON has it


class CustomMessageEntry(_Entry):
    """A plugin's message (``ctx.send_message``): the model sees it as a user message."""

    type: Literal["custom_message"] = "custom_message"
    custom_type: str
    content: str | list[TextContent | ImageContent]
    display: bool = True
    details: Any = None  # open: plugin-defined details, kept as the session JSON has them


class LabelEntry(_Entry):
    """A label set on ``target_id`` (``/tree``, ``ctx.set_label``); ``label`` None removes it."""

    type: Literal["label"] = "label"
    target_id: str
    label: str | None = None


class SessionInfoEntry(_Entry):
    type: Literal["session_info"] = "session_info"
    name: str = ""


class UnknownEntry(_Entry):
    """An entry of a type this pi does not know (a newer Pi's): its fields are kept as extras."""


def _kind(value: Any) -> str:
    kind = value.get("type") if isinstance(value, dict) else getattr(value, "type", None)
    return kind if isinstance(kind, str) and kind in _KNOWN else "unknown"


_TYPES: tuple[type[_Entry], ...] = (MessageEntry, ModelChangeEntry, ThinkingLevelChangeEntry, CompactionEntry,
                                    BranchSummaryEntry, CustomEntry, CustomMessageEntry, LabelEntry, SessionInfoEntry)
_KNOWN = frozenset(t.model_fields["type"].default for t in _TYPES)

SessionEntry = Annotated[
    Annotated[MessageEntry, Tag("message")] | Annotated[ModelChangeEntry, Tag("model_change")]
    | Annotated[ThinkingLevelChangeEntry, Tag("thinking_level_change")] | Annotated[CompactionEntry, Tag("compaction")]
    | Annotated[BranchSummaryEntry, Tag("branch_summary")] | Annotated[CustomEntry, Tag("custom")]
    | Annotated[CustomMessageEntry, Tag("custom_message")] | Annotated[LabelEntry, Tag("label")]
    | Annotated[SessionInfoEntry, Tag("session_info")] | Annotated[UnknownEntry, Tag("unknown")],
    Discriminator(_kind)]

_ADAPTER: TypeAdapter[SessionEntry] | None = None  # built on first use: most runs never read an entry typed


def entry_from_json(data: dict[str, Any]) -> SessionEntry:  # open: a session entry, Pi's JSONL record
    """The typed entry of one session-file dict. An entry whose fields do not fit its type (a hand-edited file)
    is read as an ``UnknownEntry`` rather than failing the plugin that asked."""
    global _ADAPTER
    if _ADAPTER is None:
        _ADAPTER = TypeAdapter(SessionEntry)
    try:
        entry = _ADAPTER.validate_python(data)
    except ValidationError:
        entry = UnknownEntry.model_validate({"type": "unknown", "id": "", **data})
    entry._raw = data
    return entry


class SessionEntries:
    """``ctx.session_manager``: the session file read-only, its entries typed (``pi_core.sessions.SessionManager``
    underneath, whose dicts stay the source of truth). Each entry is converted once, when first asked for."""

    def __init__(self, store: SessionLog) -> None:
        self.store = store
        self._typed: dict[int, tuple[dict[str, Any], SessionEntry]] = {}

    def _typed_one(self, raw: dict[str, Any]) -> SessionEntry:
        cached = self._typed.get(id(raw))
        if cached is None or cached[0] is not raw:
            cached = self._typed[id(raw)] = (raw, entry_from_json(raw))
        return cached[1]

    def _typed_all(self, raws: list[dict[str, Any]]) -> list[SessionEntry]:
        return [self._typed_one(raw) for raw in raws]

    @property
    def session_id(self) -> str:
        return str(self.store.session_id)

    @property
    def session_file(self) -> Path | None:
        return self.store.session_file

    @property
    def session_name(self) -> str | None:
        return self.store.session_name

    @property
    def leaf_id(self) -> str | None:
        return self.store.leaf_id

    @property
    def header(self) -> SessionHeader:
        header = SessionHeader.model_validate(self.store.header)
        header._raw = self.store.header
        return header

    def get_entries(self) -> list[SessionEntry]:
        """Every entry in file order (the header aside)."""
        return self._typed_all(self.store.get_entries())

    def get_entry(self, entry_id: str) -> SessionEntry | None:
        raw = self.store.get_entry(entry_id)
        return self._typed_one(raw) if raw is not None else None

    def get_branch(self, from_id: str | None = None) -> list[SessionEntry]:
        """Entries from the root to ``from_id`` (default: the leaf), every type included."""
        return self._typed_all(self.store.get_branch(from_id))

    def get_children(self, parent_id: str) -> list[SessionEntry]:
        return self._typed_all(self.store.get_children(parent_id))

    def get_label(self, entry_id: str) -> str | None:
        return self.store.get_label(entry_id)

    def leaf_entry(self) -> SessionEntry | None:
        raw = self.store.leaf_entry()
        return self._typed_one(raw) if raw is not None else None
