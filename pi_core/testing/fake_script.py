"""The fake model server's script: wire-neutral replies (text, thinking, tool calls, usage, faults).

``Reply`` objects are queued on ``FakeModelServer``; ``load_script``/``write_script`` keep them in JSON
for the standalone server process.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, Literal

FramePos = int | Literal["content"] | None

# --- the script -----------------------------------------------------------------------------------


@dataclass
class Text:
    text: str | list[str]  # a list gives the exact deltas


@dataclass
class Thinking:
    thinking: str | list[str]
    signature: str | None = "fake-thinking-signature"


@dataclass
class RedactedThinking:
    data: str = "opaque-redacted-payload"


@dataclass
class ToolUse:
    """One tool call. ``raw_arguments`` is sent verbatim (e.g. broken JSON) instead of ``arguments``."""

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)  # open: tool arguments and wire bodies, JSON
    id: str | None = None
    raw_arguments: str | None = None

    def arguments_json(self) -> str:
        if self.raw_arguments is not None:
            return self.raw_arguments
        return json.dumps(self.arguments, ensure_ascii=False)

    def arguments_object(self) -> dict[str, Any]:  # open: tool arguments and wire bodies, JSON
        """For wires that send arguments as an object (Google): broken raw JSON becomes ``{}``."""
        if self.raw_arguments is None:
            return self.arguments
        try:
            value = json.loads(self.raw_arguments)
        except json.JSONDecodeError:
            return {}
        return value if isinstance(value, dict) else {}


Block = Text | Thinking | RedactedThinking | ToolUse


@dataclass
class Reply:
    """One scripted model answer (or fault), described independently of any wire."""

    text: str | list[str] | None = None
    thinking: str | list[str] | None = None
    tool_calls: list[ToolUse | tuple[str, dict[str, Any]]] = field(default_factory=list)  # open: tool arguments and wire bodies, JSON
    blocks: list[Block] | None = None  # explicit block order; replaces thinking/text/tool_calls
    thinking_signature: str | None = "fake-thinking-signature"
    stop_reason: str | None = None  # stop / length / toolUse, or a raw vendor value (e.g. "refusal")
    input_tokens: int = 10
    output_tokens: int = 5
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    response_id: str | None = None
    chunk_size: int = 4  # characters per delta: tool arguments arrive in many pieces
    chunk_delay: float = 0.0  # seconds between frames
    # faults
    status: int = 200
    error_message: str | None = None
    error_type: str | None = None
    body: str | dict[str, Any] | None = None  # open: tool arguments and wire bodies, JSON; raw error body; default is the vendor-shaped JSON
    headers: dict[str, str] = field(default_factory=dict)
    empty: bool = False  # 200 with SSE headers, then the connection closes without a frame
    stream_error: str | None = None  # in-band error type, e.g. "overloaded_error"
    stream_error_after: FramePos = "content"
    disconnect_after: FramePos = None  # connection reset (RST) after this many frames
    stall_after: FramePos = None  # stop sending for ``stall_s`` seconds after this many frames
    stall_s: float = 0.0
    malformed_sse_after: FramePos = None  # insert a frame with broken JSON here
    invalid_utf8: bool = False  # every U+FFFD in the frames goes out as the invalid byte 0xFF instead
    trickle_after: FramePos = None  # from here on send one byte per ``trickle_s`` seconds, never finishing
    trickle_s: float = 0.2

    @classmethod
    def http_error(cls, status: int, message: str | None = None, *, error_type: str | None = None,
                   headers: dict[str, str] | None = None, body: str | dict[str, Any] | None = None) -> Reply:  # open: tool arguments and wire bodies, JSON
        return cls(status=status, error_message=message, error_type=error_type, headers=dict(headers or {}), body=body)

    @classmethod
    def rate_limited(cls, retry_after: float | None = None) -> Reply:
        headers = {"retry-after": f"{retry_after:g}"} if retry_after is not None else {}
        return cls.http_error(429, headers=headers)

    @classmethod
    def overloaded(cls) -> Reply:
        """Anthropic's 529 ``overloaded_error`` (other wires get a 529 with their error shape)."""
        return cls.http_error(529, "Overloaded", error_type="overloaded_error")

    def content_blocks(self) -> list[Block]:
        if self.blocks is not None:
            return list(self.blocks)
        out: list[Block] = []
        if self.thinking is not None:
            out.append(Thinking(self.thinking, self.thinking_signature))
        if self.text is not None:
            out.append(Text(self.text))
        out.extend(_tool_use(call) for call in self.tool_calls)
        return out

    def effective_stop_reason(self) -> str:
        if self.stop_reason:
            return self.stop_reason
        return "toolUse" if any(isinstance(b, ToolUse) for b in self.content_blocks()) else "stop"

    # -- JSON form (for scripts handed to the standalone server) --

    def to_json(self) -> dict[str, Any]:  # open: tool arguments and wire bodies, JSON
        data = asdict(self)
        data["tool_calls"] = [asdict(_tool_use(c)) for c in self.tool_calls]
        if self.blocks is not None:
            data["blocks"] = [{"type": _BLOCK_TYPES_REV[type(b)], **asdict(b)} for b in self.blocks]
        defaults = asdict(Reply())
        return {k: v for k, v in data.items() if v != defaults[k]}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Reply:  # open: tool arguments and wire bodies, JSON
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown reply field(s) {sorted(unknown)}; valid: {sorted(known)}")
        values = dict(data)
        values["tool_calls"] = [_tool_use_from_json(c) for c in data.get("tool_calls", [])]
        if data.get("blocks") is not None:
            values["blocks"] = [_block_from_json(b) for b in data["blocks"]]
        return cls(**values)


_BLOCK_TYPES: dict[str, type[Block]] = {"text": Text, "thinking": Thinking, "redacted_thinking": RedactedThinking, "tool_call": ToolUse}
_BLOCK_TYPES_REV = {v: k for k, v in _BLOCK_TYPES.items()}


def _tool_use(call: ToolUse | tuple[str, dict[str, Any]]) -> ToolUse:
    return call if isinstance(call, ToolUse) else ToolUse(call[0], dict(call[1]))


def _tool_use_from_json(data: Any) -> ToolUse:
    if isinstance(data, list):
        return ToolUse(data[0], dict(data[1]) if len(data) > 1 else {})
    return ToolUse(**data)


def _block_from_json(data: dict[str, Any]) -> Block:
    values = dict(data)
    kind = values.pop("type", None)
    if kind not in _BLOCK_TYPES:
        raise ValueError(f"unknown block type {kind!r}; valid: {sorted(_BLOCK_TYPES)}")
    return _BLOCK_TYPES[kind](**values)


def load_script(path: str | Path) -> list[Reply]:
    """Read replies from a JSON file: a list of reply objects, or ``{"replies": [...]}``."""
    data = json.loads(Path(path).read_text())
    items = data["replies"] if isinstance(data, dict) else data
    return [Reply.from_json(item) for item in items]


def write_script(path: str | Path, replies: Iterable[Reply]) -> Path:
    path = Path(path)
    path.write_text(json.dumps({"replies": [r.to_json() for r in replies]}, indent=2))
    return path
