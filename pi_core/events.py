"""Agent events (docs/loop.md#events) and their JSON form (docs/cli.md#json-event-lines), for JSON mode and RPC."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def to_plain(value: Any) -> Any:
    """JSON-ready form of event payloads: pydantic models by alias, results and lists recursively."""
    if isinstance(value, BaseModel):
        return value.model_dump(by_alias=True, exclude_none=True, mode="json")
    if isinstance(value, list):
        return [to_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: to_plain(v) for k, v in value.items()}
    to_json = getattr(value, "to_json", None)
    if callable(to_json):
        return to_json()
    return value


class AgentEvent:
    """One event: ``type`` plus snake_case fields (``event.message``, ``event.tool_call_id``...)."""

    __slots__ = ("fields", "type")

    def __init__(self, type: str, **fields: Any) -> None:
        self.type = type
        self.fields = fields

    def __getattr__(self, name: str) -> Any:
        try:
            return self.fields[name]
        except KeyError:
            raise AttributeError(name) from None

    def get(self, name: str, default: Any = None) -> Any:
        return self.fields.get(name, default)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type}
        for key, value in self.fields.items():
            if value is not None:
                out[_camel(key)] = to_plain(value)
        return out

    def __repr__(self) -> str:
        return f"AgentEvent({self.type!r}, {', '.join(self.fields)})"
