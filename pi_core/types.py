"""Messages, content blocks, usage, models and provider events, shaped like Pi's JSON.

Python attributes are snake_case; the JSON (sessions, RPC, JSON mode) uses Pi's camelCase keys, in Pi's
key order, so files written here open in Pi and the other way round. Dump with ``to_json()``.
"""

from __future__ import annotations

import math
import re
import time
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_validator
from pydantic.alias_generators import to_camel

StopReason = Literal["stop", "length", "toolUse", "error", "aborted"]
ThinkingLevel = Literal["off", "minimal", "low", "medium", "high", "xhigh", "max"]
THINKING_LEVELS: tuple[str, ...] = ("off", "minimal", "low", "medium", "high", "xhigh", "max")
# Offered only when the model's thinkingLevelMap names them (Pi 1.6.0).
_MAPPED_ONLY_LEVELS = ("xhigh", "max")


def now_ms() -> int:
    return int(time.time() * 1000)


_SURROGATE = re.compile("[\ud800-\udfff]")


def encodable(text: str) -> str:
    """``text`` with every lone UTF-16 surrogate (a model's ``"\\ud800"``, a file name decoded with
    surrogateescape) replaced by U+FFFD and escaped pairs joined, so UTF-8 can always encode it."""
    if _SURROGATE.search(text) is None:
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def _finite(value: Any, path: list[str], found: dict[str, str]) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        found[".".join(path) or "root"] = "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
        return None
    if isinstance(value, list):
        return [_finite(v, [*path, str(i)], found) for i, v in enumerate(value)]
    if isinstance(value, dict):
        return {k: _finite(v, [*path, str(k)], found) for k, v in value.items()}
    return value


def encodable_value(value: Any) -> Any:  # open: a JSON value, strings re-encoded, the rest unchanged
    """``encodable`` applied to every string (keys included) of JSON-like ``value``; the rest unchanged."""
    if isinstance(value, str):
        return encodable(value)
    if isinstance(value, list):
        return [encodable_value(v) for v in value]
    if isinstance(value, dict):
        return {encodable_value(k): encodable_value(v) for k, v in value.items()}
    return value


class PiModel(BaseModel):
    """Base for every wire type: camelCase JSON, unknown keys kept (Pi may add fields).

    ``defer_build``: a class's validator and serializer are built when it is first used, so start-up pays only
    for the types a run touches."""

    model_config = ConfigDict(alias_generator=to_camel, validate_by_name=True, validate_by_alias=True,
                              extra="allow", serialize_by_alias=True, defer_build=True)

    def to_json(self) -> dict[str, Any]:  # open: JSON
        return self.model_dump(by_alias=True, exclude_none=True, mode="json")


# --- content blocks -------------------------------------------------------------------------------


class TextContent(PiModel):
    type: Literal["text"] = "text"
    text: str
    text_signature: str | None = None


class ThinkingContent(PiModel):
    type: Literal["thinking"] = "thinking"
    thinking: str
    thinking_signature: str | None = None
    redacted: bool | None = None


class ImageContent(PiModel):
    type: Literal["image"] = "image"
    data: str  # base64
    mime_type: str


class ToolCall(PiModel):
    type: Literal["toolCall"] = "toolCall"
    id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)  # open: the model's tool arguments, JSON
    thought_signature: str | None = None
    # Where the model sent NaN or ±Infinity (JSON has neither): kept for the validation error, while
    # ``arguments`` holds null there so the message can be stored and sent again (never serialised).
    _non_finite: dict[str, str] = PrivateAttr(default_factory=dict)

    @property
    def non_finite(self) -> dict[str, str]:
        """``{"offset": "NaN"}``: argument paths whose value was not a JSON number, as the model wrote it."""
        return self._non_finite

    def replace_non_finite(self) -> None:
        """Swap NaN/±Infinity in ``arguments`` for null (what ``JSON.stringify`` does), remembering where."""
        found: dict[str, str] = {}
        self.arguments = _finite(self.arguments, [], found)
        self._non_finite.update(found)


UserContent = Annotated[TextContent | ImageContent, Field(discriminator="type")]
AssistantContent = Annotated[
    TextContent | ThinkingContent | ToolCall, Field(discriminator="type")
]


# --- usage ----------------------------------------------------------------------------------------


class PerTokenKind(PiModel):
    """A USD figure for each kind of token: what a request cost (``Cost``) or a model's price (``ModelCost``)."""

    input: float = 0
    output: float = 0
    cache_read: float = 0
    cache_write: float = 0


class Cost(PerTokenKind):
    total: float = 0


class Usage(PiModel):
    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    total_tokens: int | None = None
    cost: Cost = Field(default_factory=Cost)


# --- messages -------------------------------------------------------------------------------------


class UserMessage(PiModel):
    role: Literal["user"] = "user"
    content: str | list[UserContent]
    timestamp: int = Field(default_factory=now_ms)

    def text(self) -> str:
        if isinstance(self.content, str):
            return self.content
        return "\n".join(b.text for b in self.content if isinstance(b, TextContent))


class AssistantMessage(PiModel):
    role: Literal["assistant"] = "assistant"
    content: list[AssistantContent] = Field(default_factory=list)
    api: str = "unknown"
    provider: str = "unknown"
    model: str = "unknown"
    usage: Usage = Field(default_factory=Usage)
    stop_reason: StopReason = "stop"
    timestamp: int = Field(default_factory=now_ms)
    error_message: str | None = None
    response_id: str | None = None

    def text(self) -> str:
        return "".join(b.text for b in self.content if isinstance(b, TextContent))

    def tool_calls(self) -> list[ToolCall]:
        return [b for b in self.content if isinstance(b, ToolCall)]

    def make_encodable(self) -> None:
        """A model may send ``"\\ud800"`` (a lone surrogate): UTF-8 cannot encode it, so the session file, the
        next request and JSON output would fail on it forever. The loop replaces it here, before anyone keeps it."""
        for block in self.content:
            if isinstance(block, TextContent):
                block.text = encodable(block.text)
            elif isinstance(block, ThinkingContent):
                block.thinking = encodable(block.thinking)
            elif isinstance(block, ToolCall):
                block.name = encodable(block.name)
                block.arguments = encodable_value(block.arguments)
                block.replace_non_finite()  # NaN/Infinity: JSON has neither; validation reports them
        if self.error_message is not None:
            self.error_message = encodable(self.error_message)


class ToolResultMessage(PiModel):
    role: Literal["toolResult"] = "toolResult"
    tool_call_id: str
    tool_name: str
    content: list[UserContent] = Field(default_factory=list)
    details: Any = None  # open: tool-defined details, stored in the session JSON
    is_error: bool = False
    timestamp: int = Field(default_factory=now_ms)

    def text(self) -> str:
        return "\n".join(b.text for b in self.content if isinstance(b, TextContent))


class CustomMessage(PiModel):
    """An app-defined message (``bashExecution``, ``custom``, a plugin's role). Never sent as is.

    Every field but ``role`` is kept as given, in its original order, so a session line round-trips
    byte for byte; ``timestamp`` is added (last) only when missing.
    """

    role: str

    @model_validator(mode="before")
    @classmethod
    def _stamp(cls, data: Any) -> Any:
        if isinstance(data, dict) and "timestamp" not in data:
            data = {**data, "timestamp": now_ms()}
        return data


Message = UserMessage | AssistantMessage | ToolResultMessage
AgentMessage = UserMessage | AssistantMessage | ToolResultMessage | CustomMessage

_ROLE_TYPES: dict[str, type[PiModel]] = {
    "user": UserMessage,
    "assistant": AssistantMessage,
    "toolResult": ToolResultMessage,
}


def message_from_json(data: dict[str, Any]) -> AgentMessage:  # open: a message as Pi's JSON
    """Parse one message dict (from a session file, RPC or a test) into its typed model."""
    cls = _ROLE_TYPES.get(data.get("role", ""), CustomMessage)
    return cls.model_validate(data)  # type: ignore[return-value]


# --- models ---------------------------------------------------------------------------------------


class CostTier(PiModel):
    """Prices (USD per million tokens) that apply once a request's input exceeds ``input_tokens_above``."""

    input_tokens_above: int
    input: float = 0
    output: float = 0
    cache_read: float = 0
    cache_write: float = 0


class ModelCost(PerTokenKind):
    """USD per million tokens; ``tiers`` replace these prices for long requests (Pi's tiered pricing)."""

    tiers: list[CostTier] | None = None


class Model(PiModel):
    id: str
    name: str = ""
    api: str
    provider: str
    base_url: str = ""
    reasoning: bool = False
    thinking_level_map: dict[str, str | None] | None = None
    input: list[str] = Field(default_factory=lambda: ["text"])
    cost: ModelCost = Field(default_factory=ModelCost.model_construct)  # all defaults: nothing to validate
    context_window: int = 128_000
    max_tokens: int = 16_384
    headers: dict[str, str] | None = None
    compat: dict[str, Any] | None = None  # open: the models file's compat object, JSON
    prompt_cache: dict[str, float] | None = None  # seconds a provider keeps a prompt cache, per retention tier


# Constructed, not validated: importing this module builds no validator (and so no pydantic schema machinery).
PLACEHOLDER_MODEL = Model.model_construct(id="unknown", name="unknown", api="unknown", provider="unknown")


def supported_thinking_levels(model: Model) -> list[str]:
    """``["off"]`` for a non-reasoning model; otherwise the levels minus those its ``thinking_level_map``
    maps to None, and minus ``xhigh`` and ``max`` unless the map names them."""
    if not model.reasoning:
        return ["off"]
    level_map = model.thinking_level_map or {}
    levels = []
    for level in THINKING_LEVELS:
        if level in level_map and level_map[level] is None:
            continue
        if level in _MAPPED_ONLY_LEVELS and level_map.get(level) is None:
            continue
        levels.append(level)
    return levels


def clamp_thinking_level(model: Model, level: str) -> str:
    """The level if the model supports it, else the nearest supported one above, else below, else ``off``."""
    if level not in THINKING_LEVELS:
        raise ValueError(f"unknown thinking level {level!r}; valid: {', '.join(THINKING_LEVELS)}")
    supported = supported_thinking_levels(model)
    if level in supported:
        return level
    position = THINKING_LEVELS.index(level)
    for candidate in THINKING_LEVELS[position + 1:]:
        if candidate in supported:
            return candidate
    for candidate in reversed(THINKING_LEVELS[:position]):
        if candidate in supported:
            return candidate
    return "off"


def clamp_level(model: Model | None, level: str) -> str:
    """``clamp_thinking_level``, except that no model means ``off`` and an unrecognised level becomes
    the model's first supported one (a client or an old session file may say anything)."""
    if model is None or model.id == "unknown":
        return "off"
    if level not in THINKING_LEVELS:
        return supported_thinking_levels(model)[0]
    return clamp_thinking_level(model, level)


@dataclass(repr=False)
class ScopedModel:
    """One entry of ``--models`` / ``enabledModels``: a model to cycle to, with its own thinking level."""

    model: Model
    thinking: str | None = None


class ToolDefinition(PiModel):
    """A tool as sent to a provider: name, description, JSON Schema parameters."""

    name: str
    description: str
    parameters: dict[str, Any]  # open: a JSON Schema


class Context(PiModel):
    system_prompt: str | None = None
    messages: list[Message] = Field(default_factory=list)
    tools: list[ToolDefinition] | None = None


# --- provider stream events (docs/providers.md#stream-events) -----------------------------------

EventType = Literal[
    "start",
    "text_start",
    "text_delta",
    "text_end",
    "thinking_start",
    "thinking_delta",
    "thinking_end",
    "toolcall_start",
    "toolcall_delta",
    "toolcall_end",
    "done",
    "error",
]


class AssistantMessageEvent(PiModel):
    """One provider stream event. ``partial`` is the same mutable message on every event but the last."""

    type: EventType
    content_index: int | None = None
    delta: str | None = None
    content: str | None = None
    tool_call: ToolCall | None = None
    partial: AssistantMessage | None = None
    reason: StopReason | None = None
    message: AssistantMessage | None = None
    error: AssistantMessage | None = None

    @property
    def final(self) -> AssistantMessage | None:
        """The finished message of a ``done`` or ``error`` event."""
        return self.message if self.type == "done" else self.error


# --- compaction (docs/sessions.md#compaction): what is summarised and what is stored ---------------


@dataclass(eq=False, repr=False)
class CompactionSettings:
    """The ``compaction`` settings: whether to compact, the tokens to reserve and to keep."""

    enabled: bool = True
    reserve_tokens: int = 16384
    keep_recent_tokens: int = 20000


@dataclass(eq=False, repr=False)
class FileOperations:
    """The files a session's tools read, wrote and edited (for compaction summaries)."""

    read: set[str] = field(default_factory=set)
    written: set[str] = field(default_factory=set)
    edited: set[str] = field(default_factory=set)

    def file_lists(self) -> tuple[list[str], list[str]]:
        """(read-only files, modified files), both sorted."""
        modified = self.edited | self.written
        return sorted(self.read - modified), sorted(modified)


