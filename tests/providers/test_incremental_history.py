"""Responses, Anthropic and Google history conversion is incremental (a turn converts only what was
appended since the last one: issue 19's flat turns) and equal to converting in one piece, also when the
history changes under it (a compaction, a branch switch, a ``pi_context`` plugin replacing messages), down to
the request's bytes (the shared history's JSON is kept, not encoded again every turn)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pi_plugins.anthropic_messages.payload import convert_messages
from pi_plugins.google_generative_ai.convert import convert_contents
from pi_plugins.openai_responses.convert import convert_input

from pi_core.llm import transport
from pi_core.types import (
    AssistantMessage,
    Context,
    ImageContent,
    Message,
    Model,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

PIXEL = "iVBORw0KGgo="
Converter = Callable[[Model, Context, bool], Any]


def _responses(model: Model, context: Context, share: bool) -> Any:
    return convert_input(model, context, share=share)


def _anthropic(model: Model, context: Context, share: bool) -> Any:
    return convert_messages(context, model, False, {"type": "ephemeral"}, share=share)


def _google(model: Model, context: Context, share: bool) -> Any:
    return convert_contents(model, context, share=share)


WIRES: dict[str, tuple[str, Converter]] = {
    "anthropic": ("anthropic-messages", _anthropic),
    "google": ("google-generative-ai", _google),
    "responses": ("openai-responses", _responses),
}


def message(kind: int, n: int, api: str) -> Message:
    if kind == 0:
        return UserMessage(content=f"user {n}")
    if kind == 1:
        return UserMessage(content=[TextContent(text=f"look {n}"), ImageContent(data=PIXEL, mime_type="image/png")])
    if kind in (2, 3):  # this model's reply with a call, or another provider's (ids renamed, thinking as text)
        same = kind == 2
        return AssistantMessage(api=api if same else "other-api", provider="openai" if same else "other",
                                model="m", stop_reason="toolUse",
                                content=[ThinkingContent(thinking=f"t{n}", thinking_signature=None),
                                         TextContent(text=f"a{n}"),
                                         ToolCall(id=f"call{n}|item{n}", name="read", arguments={"n": n})])
    if kind == 4:
        return AssistantMessage(api=api, provider="openai", model="m", stop_reason="error",
                                error_message="boom", content=[TextContent(text="partial")])
    if kind == 5:
        return ToolResultMessage(tool_call_id=f"call{n - 1}|item{n - 1}", tool_name="read",
                                 content=[TextContent(text=f"r{n}"), ImageContent(data=PIXEL, mime_type="image/png")])
    if kind == 6:
        return AssistantMessage(api=api, provider="openai", model="m", stop_reason="stop",
                                content=[TextContent(text=f"answer {n}")])
    if kind == 7:
        return UserMessage(content="")
    return ToolResultMessage(tool_call_id=f"call{n - 1}|item{n - 1}", tool_name="read",
                             content=[TextContent(text=f"r{n}")], is_error=n % 2 == 0)


def _model(api: str, images: bool) -> Model:
    return Model(id="m", api=api, provider="openai", base_url="http://x/v1",
                 input=["text", "image"] if images else ["text"])


@pytest.mark.parametrize("wire", sorted(WIRES))
@settings(max_examples=150, deadline=None)
@given(kinds=st.lists(st.integers(0, 8), max_size=30), images=st.booleans(), step=st.integers(1, 5))
def test_growing_history_converts_like_one_piece(wire: str, kinds: list[int], images: bool, step: int) -> None:
    api, convert = WIRES[wire]
    model = _model(api, images)
    history = [message(kind, n, api) for n, kind in enumerate(kinds)]
    for end in [*range(0, len(history), step), len(history)]:
        converts_alike(model, convert, history[:end])


def same_bytes(shared: list[Any], plain: list[Any]) -> bool:
    """The request body with the shared items encodes exactly as ``json.dumps`` encodes the plain one."""
    body = {"model": "m", "items": shared, "stream": True}
    expected = json.dumps({**body, "items": plain}, ensure_ascii=False, separators=(",", ":")).encode()
    return transport._dumps(body) == expected


def converts_alike(model: Any, convert: Any, messages: list[Message]) -> None:
    """``messages`` convert to the same items, and the same JSON bytes, with and without the shared prefix."""
    context = Context(system_prompt="sys", messages=messages)
    shared, plain = convert(model, context, True), convert(model, context, False)
    assert shared == plain
    assert same_bytes(shared, plain)


@pytest.mark.parametrize("wire", sorted(WIRES))
def test_a_changed_history_is_converted_again(wire: str) -> None:
    api, convert = WIRES[wire]
    model = _model(api, True)
    history = [message(k, n, api) for n, k in enumerate([0, 2, 8, 2, 8, 6, 0, 2, 8, 6, 0])]

    def same(messages: list[Message]) -> None:
        converts_alike(model, convert, messages)

    same(history)
    same([*history, message(2, 11, api), message(8, 12, api)])
    same([UserMessage(content="summary of the first part"), *history[6:]])  # a compaction
    same(history[:4])  # back on an earlier branch
    same([*history[:2], message(8, 40, api), *history[3:]])  # pi_context rewrote one tool result
    rewritten = [*history[:-1], UserMessage(content="rewritten last prompt")]
    same(rewritten)
    first = convert(model, Context(messages=rewritten), True)
    assert "rewritten last prompt" in json.dumps(first[-1])


@pytest.mark.parametrize("wire", sorted(WIRES))
def test_a_history_that_is_exactly_the_kept_prefix(wire: str) -> None:
    """Back on a branch that ends where the last request's kept prefix ends: nothing of that request is new,
    and Anthropic's cache marker goes on a copy of the last (shared) item, never into the shared one."""
    api, convert = WIRES[wire]
    model = _model(api, False)
    history = [message(k, n, api) for n, k in enumerate([0, 2, 8, 0, 2, 8])]

    def same(messages: list[Message]) -> None:
        converts_alike(model, convert, messages)

    same(history)
    same(history[:4])  # the kept prefix: up to the prompt before the last call
    same(history)
    same(history[:4])
