"""Convert a growing history to a wire's messages incrementally: a turn converts only what was appended.

The agent loop sends the whole history on every turn, and the messages of a history are never changed in
place once appended (a compaction, a branch switch or a ``pi_context`` rewrite hands over new objects), so
the converted prefix of the last request is reused while the new history starts with the very same message
objects (or equal ones). A changed or missing message anywhere in that prefix means a conversion from the
start. The JSON text of the shared items is kept too (``SharedItems``): a request encodes only what it adds.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Any, Generic, TypeVar

from pi_core.types import AssistantMessage, ImageContent, Message, ToolCall, UserMessage

S = TypeVar("S")  # what one converted segment hands the next (renamed tool-call ids, a running index...)

Convert = Callable[[Sequence[Message], S, list[Any]], None]  # open: the wire's message items, its JSON


class JsonTexts:
    """The JSON text of a conversation's shared wire items, by position, each with the item it encodes (a
    list whose item was replaced gets that one encoded afresh): filled in by the transport as it encodes a
    request, replaced whole (never edited), so a thread reads a complete one."""

    __slots__ = ("texts",)

    def __init__(self) -> None:
        self.texts: tuple[tuple[Any, str], ...] = ()


class SharedItems(list[Any]):
    """A request's wire items: ``self[start:end]`` are shared with the conversation's other requests and never
    edited, so the transport encodes each of them once (``json`` keeps the text of shared item ``start + i``
    at ``i``); the others are this request's own. Otherwise a plain list."""

    __slots__ = ("end", "json", "start")

    def __init__(self, items: list[Any], start: int, end: int, json: JsonTexts) -> None:  # open: wire items, JSON
        super().__init__(items)
        self.start, self.end, self.json = start, end, json

    def after(self, head: list[Any]) -> SharedItems:  # open: wire items, JSON
        """``head`` (this request's own items) followed by these."""
        return SharedItems([*head, *self], self.start + len(head), self.end + len(head), self.json)

    def own_last(self) -> None:
        """Make the last item this request's own (a copy) before it is edited."""
        if self and self.end >= len(self):
            import copy

            self[-1] = copy.deepcopy(self[-1])
            self.end = len(self) - 1


class _Prefix(Generic[S]):
    __slots__ = ("json", "messages", "out", "state")

    def __init__(self, messages: list[Message], out: list[Any], state: S, json: JsonTexts) -> None:
        self.messages, self.out, self.state, self.json = messages, out, state, json


class Prefixes(Generic[S]):
    """The converted history of the last few conversations, by the caller's key (model, settings, system
    prompt: whatever else the conversion reads).

    ``cut_before(message)`` says a history may be cut just before ``message``: converting the part before
    and the part from it separately, handing ``state`` over, gives what converting in one piece gives, and
    the part from it never edits an item of the part before (so those items can be shared: callers must
    not edit the returned items that came from the prefix; ``convert`` returns how many there are).
    """

    def __init__(self, cut_before: Callable[[Message], bool], copy_state: Callable[[S], S], size: int = 8) -> None:
        self._cut_before = cut_before
        self._copy = copy_state
        self._size = size
        self._prefixes: dict[Hashable, _Prefix[S]] = {}

    def convert(self, key: Hashable, messages: Sequence[Message], state: S,
                convert: Convert[S]) -> tuple[SharedItems, int]:
        """``convert(segment, state, out)`` appends the wire items of ``segment`` to ``out``; returns every
        item of ``messages`` and how many of them (at the front) are shared with earlier and later calls."""
        out: list[Any] = []
        start = 0
        json = JsonTexts()
        cached = self._prefixes.get(key)
        # List equality checks identity first (then content: an equal message converts the same), in C.
        if cached is not None and cached.messages == messages[:len(cached.messages)]:
            out, start, state, json = list(cached.out), len(cached.messages), self._copy(cached.state), cached.json
        cut = next((i for i in range(len(messages) - 1, start - 1, -1) if self._cut_before(messages[i])), start)
        convert(messages[start:cut], state, out)
        self._prefixes.pop(key, None)
        self._prefixes[key] = _Prefix(list(messages[:cut]), list(out), self._copy(state), json)
        while len(self._prefixes) > self._size:
            del self._prefixes[next(iter(self._prefixes))]
        shared = len(out)
        convert(messages[cut:], state, out)
        return SharedItems(out, 0, shared, json), shared


def cut_before_standalone_turn(message: Message) -> bool:
    """A cut rule for wires that merge consecutive tool results into one turn: before a non-empty prompt
    or a sent reply with a tool call, which always become a turn of their own (nothing after them merges
    into an earlier turn); a failed reply is left out, and orphaned calls get their results there."""
    if isinstance(message, UserMessage):
        content = message.content
        if isinstance(content, str):
            return bool(content.strip())
        return any(isinstance(block, ImageContent) or block.text.strip() for block in content)
    return isinstance(message, AssistantMessage) and message.stop_reason not in ("error", "aborted") and \
        any(isinstance(block, ToolCall) for block in message.content)
