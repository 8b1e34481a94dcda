"""Chat Completions history conversion is incremental (a turn converts only what was appended since
the last one, so per-turn work stays flat over a long run: issue 19) and equal to converting in one piece,
down to the request's bytes (the shared history's JSON is kept, not encoded again every turn)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from pi_plugins.openai_completions.compat import get_compat
from pi_plugins.openai_completions.convert import convert_messages

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
MODELS = [Model(id="m", api="openai-completions", provider="p", base_url="http://x/v1", input=["text", "image"]),
          Model(id="m", api="openai-completions", provider="p", base_url="http://x/v1", input=["text"])]
COMPATS = [{}, {"requiresAssistantAfterToolResult": True, "requiresToolResultName": True,
                "requiresThinkingAsText": True}]


def message(kind: int, n: int) -> Message:
    if kind == 0:
        return UserMessage(content=f"user {n}")
    if kind == 1:
        return UserMessage(content=[TextContent(text=f"look {n}"), ImageContent(data=PIXEL, mime_type="image/png")])
    if kind in (2, 3):  # this model's reply with a call, or another provider's (ids renamed, thinking as text)
        provider = "p" if kind == 2 else "other"
        return AssistantMessage(api="openai-completions" if kind == 2 else "anthropic-messages", provider=provider,
                                model="m", stop_reason="toolUse",
                                content=[ThinkingContent(thinking=f"t{n}", thinking_signature="reasoning_content"),
                                         TextContent(text=f"a{n}"),
                                         ToolCall(id=f"call|{n}" * 8, name="read", arguments={"n": n})])
    if kind == 4:
        return AssistantMessage(api="openai-completions", provider="p", model="m", stop_reason="error",
                                error_message="boom", content=[TextContent(text="partial")])
    if kind == 5:
        return ToolResultMessage(tool_call_id=f"call|{n - 1}" * 8, tool_name="read",
                                 content=[TextContent(text=f"r{n}"), ImageContent(data=PIXEL, mime_type="image/png")])
    return ToolResultMessage(tool_call_id=f"call|{n - 1}" * 8, tool_name="read", content=[TextContent(text=f"r{n}")])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 6), max_size=40), st.integers(0, 1), st.integers(0, 1), st.integers(1, 6))
def test_growing_history_converts_like_one_piece(kinds: list[int], model_index: int, compat_index: int,
                                                 step: int) -> None:
    model = MODELS[model_index]
    compat = get_compat(model.model_copy(update={"compat": COMPATS[compat_index]}))
    history = [message(kind, n) for n, kind in enumerate(kinds)]
    for end in [*range(0, len(history), step), len(history)]:
        context = Context(system_prompt="sys", messages=history[:end])
        shared = convert_messages(model, context, compat, share=True)
        plain = convert_messages(model, context, compat, share=False)
        assert shared == plain
        assert same_bytes(shared, plain)


def same_bytes(shared: list[Any], plain: list[Any]) -> bool:
    """The request body with the shared items encodes exactly as ``json.dumps`` encodes the plain one."""
    body = {"model": "m", "messages": shared, "stream": True}
    expected = json.dumps({**body, "messages": plain}, ensure_ascii=False, separators=(",", ":")).encode()
    return transport._dumps(body) == expected


def test_an_edited_history_is_converted_again() -> None:
    model, compat = MODELS[0], get_compat(MODELS[0])
    history: list[Any] = [message(0, 0), message(2, 1), message(6, 2), message(0, 3), message(2, 4)]
    convert_messages(model, Context(messages=history), compat, share=True)
    edited = [history[0], message(0, 9), *history[2:]]  # a compaction or a branch replaced a message
    shared = convert_messages(model, Context(messages=edited), compat, share=True)
    assert shared == convert_messages(model, Context(messages=edited), compat, share=False)
    assert same_bytes(shared, convert_messages(model, Context(messages=edited), compat, share=False))


def test_a_turn_encodes_only_what_it_adds(monkeypatch: Any) -> None:
    model, compat = MODELS[1], get_compat(MODELS[1])
    history: list[Any] = [message(0, 0), message(2, 1), message(6, 2)]
    convert_messages(model, Context(system_prompt="sys", messages=history), compat, share=True)
    transport._dumps({"messages": convert_messages(model, Context(system_prompt="sys", messages=history), compat,
                                                   share=True)})
    encoded: list[Any] = []
    encode = transport._ENCODE
    monkeypatch.setattr(transport, "_ENCODE", lambda value: encoded.append(value) or encode(value))
    grown = [*history, message(2, 3), message(6, 4)]
    shared = convert_messages(model, Context(system_prompt="sys", messages=grown), compat, share=True)
    assert len(shared) == 6  # the system prompt and five messages
    transport._dumps({"messages": shared})
    # the first request kept the system prompt and the first prompt (its history is cut before the call)
    assert encoded == ["messages", *shared[2:]]
    encoded.clear()
    again = convert_messages(model, Context(system_prompt="sys", messages=grown), compat, share=True)
    transport._dumps({"messages": again})
    assert encoded == ["messages", *again[4:]]  # only the last turn's own call and result


def test_a_replaced_shared_item_is_encoded_afresh() -> None:
    model, compat = MODELS[1], get_compat(MODELS[1])
    history: list[Any] = [message(0, 0), message(2, 1), message(6, 2), message(0, 3), message(2, 4)]
    for _ in range(2):  # the second request finds the first one's texts kept
        shared = convert_messages(model, Context(system_prompt="sys", messages=history), compat, share=True)
        transport._dumps({"messages": shared})
    shared[1] = {"role": "user", "content": "replaced in the list, not edited"}
    assert same_bytes(shared, list(shared))
    assert b"replaced in the list" in transport._dumps({"messages": shared})
