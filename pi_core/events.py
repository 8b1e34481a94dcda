"""Agent events (docs/loop.md#events), their JSON form (docs/cli.md#json-event-lines, for JSON mode and RPC) and
the listeners a session fans them out to."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from pydantic import BaseModel


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def to_plain(value: Any) -> Any:  # open: a JSON-able value and its plain form
    """JSON-ready form of event payloads: pydantic models (pi's wire types among them) by alias, results and
    lists recursively."""
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

    def __init__(self, type: str, **fields: Any) -> None:  # open: each type has its own fields, plugins' events too
        self.type = type
        self.fields = fields

    def __getattr__(self, name: str) -> Any:  # open: each type has its own fields, plugins' events too
        try:
            return self.fields[name]
        except KeyError:
            raise AttributeError(name) from None

    def get(self, name: str, default: Any = None) -> Any:  # open: each type has its own fields, plugins' events too
        return self.fields.get(name, default)

    def to_json(self) -> dict[str, Any]:  # open: JSON
        out: dict[str, Any] = {"type": self.type}
        for key, value in self.fields.items():
            if value is not None:
                out[_camel(key)] = to_plain(value)
        return out

    def __repr__(self) -> str:
        return f"AgentEvent({self.type!r}, {', '.join(self.fields)})"


Listener = Callable[[AgentEvent], object]


Emit = Callable[[AgentEvent], Coroutine[object, object, None]]  # how the loop announces: awaited, listeners are barriers


class Listeners:
    """Who hears a session's events, in order: its listeners, then the work ``forward`` returns for the event
    (the plugins' ``pi_agent_event``; None when no plugin listens). Extension errors are not forwarded, so a
    failing plugin cannot loop. Work scheduled from synchronous code is kept until done (shutdown waits)."""

    def __init__(self, forward: Callable[[AgentEvent], Awaitable[object] | None] = lambda _event: None) -> None:
        self._listeners: list[Listener] = []
        self._forward = forward
        self.background: set[asyncio.Task[Any]] = set()

    def __len__(self) -> int:
        return len(self._listeners)

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    async def emit(self, event: AgentEvent) -> None:
        for listener in list(self._listeners):
            outcome = listener(event)
            if asyncio.iscoroutine(outcome):
                await outcome
        work = self._forward(event) if event.type != "extension_error" else None
        if work is not None:
            await work

    def emit_later(self, event: AgentEvent, *, forward: bool = True) -> None:
        """Emit from synchronous code: listeners run now; async ones (and ``forward``, unless False) are scheduled."""
        for listener in list(self._listeners):
            outcome = listener(event)
            if asyncio.iscoroutine(outcome):
                self.later(outcome)
        work = self._forward(event) if forward and event.type != "extension_error" else None
        if work is not None:
            self.later(work)

    def later(self, work: Awaitable[object]) -> asyncio.Task[object] | None:
        """Schedule ``work`` on the running loop and keep it until done; None (work dropped) without a loop."""
        try:
            task = asyncio.ensure_future(work)
        except RuntimeError:
            if asyncio.iscoroutine(work):
                work.close()  # no loop running: nobody can be listening
            return None
        self.background.add(task)
        task.add_done_callback(self.background.discard)
        return task
