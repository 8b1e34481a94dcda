"""openai-responses through the real openai SDK against the fake server's Responses wire."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from pi_plugins.openai_responses import PROVIDER

from pi_core.llm.overflow import is_context_overflow
from pi_core.llm.retry import is_retryable_error
from pi_core.providers import StreamOptions
from pi_core.testing.fake_server import FakeModelServer, Reply
from pi_core.types import (
    AssistantMessage,
    AssistantMessageEvent,
    Context,
    Model,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolDefinition,
    ToolResultMessage,
    UserMessage,
)

READ_TOOL = ToolDefinition(name="read", description="Read a file.", parameters={
    "type": "object", "required": ["path"], "properties": {"path": {"type": "string"}}})


@pytest.fixture
def server() -> Any:
    with FakeModelServer() as fake:
        yield fake


def make_model(server: FakeModelServer, **fields: Any) -> Model:
    defaults: dict[str, Any] = {"id": "gpt-5.4", "api": "openai-responses", "provider": "openai", "reasoning": True,
                                    "base_url": server.base_url_for("openai-responses"),
                                    "cost": {"input": 2, "output": 10, "cacheRead": 0.2, "cacheWrite": 0}}
    return Model(**{**defaults, **fields})


def run(model: Model, context: Context, options: StreamOptions | None = None) -> list[AssistantMessageEvent]:
    async def go() -> list[AssistantMessageEvent]:
        return [e async for e in PROVIDER.stream(model, context, options or StreamOptions(api_key="test-key"))]
    return asyncio.run(go())


def hello(tools: list[ToolDefinition] | None = None) -> Context:
    return Context(system_prompt="You are pi.", messages=[UserMessage(content="Hello")], tools=tools)


def test_request_body(server: FakeModelServer) -> None:
    server.add(Reply(text="hi"))
    run(make_model(server), hello([READ_TOOL]),
        StreamOptions(api_key="k", reasoning="medium", session_id="sess-1"))
    request = server.requests[0]
    body = request.body
    assert body["input"] == [{"role": "developer", "content": "You are pi."},
                             {"role": "user", "content": [{"type": "input_text", "text": "Hello"}]}]
    assert body["store"] is False and body["stream"] is True and body["max_output_tokens"] == 16384
    assert body["tools"] == [{"type": "function", "name": "read", "description": "Read a file.",
                              "parameters": READ_TOOL.parameters, "strict": False}]
    assert body["reasoning"] == {"effort": "medium", "summary": "auto"}
    assert body["include"] == ["reasoning.encrypted_content"]
    assert body["prompt_cache_key"] == "sess-1"
    assert request.headers["session_id"] == "sess-1" and request.headers["x-client-request-id"] == "sess-1"


def test_thinking_off_asks_for_no_reasoning(server: FakeModelServer) -> None:
    server.add(Reply(text="hi"), Reply(text="hi"))
    run(make_model(server), hello())
    assert server.requests[0].body["reasoning"] == {"effort": "none"}
    run(make_model(server, reasoning=False), hello())
    assert "reasoning" not in server.requests[1].body and server.requests[1].body["input"][0]["role"] == "system"


def test_reasoning_text_and_tool_calls(server: FakeModelServer) -> None:
    server.add(Reply(thinking="Plan: read it.", text="Reading.", chunk_size=2,
                     tool_calls=[("read", {"path": "a.py"}), ("read", {"path": "b.py"})]))
    events = run(make_model(server), hello([READ_TOOL]), StreamOptions(api_key="k", reasoning="high"))
    final = events[-1].message
    assert events[-1].type == "done" and final.stop_reason == "toolUse"
    thinking, text, first, second = final.content
    assert isinstance(thinking, ThinkingContent) and thinking.thinking == "Plan: read it."
    assert json.loads(thinking.thinking_signature)["type"] == "reasoning"
    assert isinstance(text, TextContent) and text.text == "Reading."
    assert json.loads(text.text_signature)["v"] == 1
    assert isinstance(first, ToolCall) and first.arguments == {"path": "a.py"} and "|fc_" in first.id
    assert isinstance(second, ToolCall) and second.arguments == {"path": "b.py"}
    assert sum(e.type == "toolcall_delta" for e in events) > 4
    assert final.response_id == "resp_fake_1"


def test_replay_reasoning_items_and_function_calls(server: FakeModelServer) -> None:
    server.add(Reply(thinking="think", text="t", tool_calls=[("read", {"path": "a"})]), Reply(text="done"))
    model = make_model(server)
    first = run(model, hello([READ_TOOL]), StreamOptions(api_key="k", reasoning="low"))[-1].message
    call = first.tool_calls()[0]
    result = ToolResultMessage(tool_call_id=call.id, tool_name="read", content=[TextContent(text="contents")])
    context = hello([READ_TOOL])
    context.messages += [first, result]
    run(model, context, StreamOptions(api_key="k", reasoning="low"))
    items = server.requests[1].body["input"]
    kinds = [item.get("type", item.get("role")) for item in items]
    assert kinds == ["developer", "user", "reasoning", "message", "function_call", "function_call_output"]
    call_id, item_id = call.id.split("|")
    assert items[4]["call_id"] == call_id and items[4]["id"] == item_id
    assert items[5] == {"type": "function_call_output", "call_id": call_id, "output": "contents"}


def test_other_model_of_same_provider_omits_fc_item_ids(server: FakeModelServer) -> None:
    server.add(Reply(text="ok"))
    earlier = AssistantMessage(api="openai-responses", provider="openai", model="gpt-5.2", stop_reason="toolUse",
                               content=[ToolCall(id="call1|fc_item2", name="read", arguments={"path": "x"})])
    result = ToolResultMessage(tool_call_id="call1|fc_item2", tool_name="read", content=[TextContent(text="")])
    run(make_model(server), Context(messages=[UserMessage(content="x"), earlier, result]))
    call, output = server.requests[0].body["input"][1:]
    assert "id" not in call and call["call_id"] == "call1"
    assert output["output"] == "(see attached image)"


def test_usage_cost_and_incomplete(server: FakeModelServer) -> None:
    server.add(Reply(text="cut", stop_reason="length", input_tokens=500_000, cache_read_tokens=500_000,
                     output_tokens=1_000_000))
    final = run(make_model(server), hello())[-1].message
    assert final.stop_reason == "length"
    usage = final.usage
    assert (usage.input, usage.cache_read, usage.output, usage.total_tokens) == (500_000, 500_000, 1_000_000,
                                                                               2_000_000)
    assert usage.cost.total == pytest.approx(1 + 0.1 + 10)


def test_failed_and_stream_error_events(server: FakeModelServer) -> None:
    server.add(Reply(text="x", stop_reason="failed"), Reply(text="x", stream_error="server_error",
                                                            error_message="boom"))
    first = run(make_model(server), hello())[-1]
    assert first.type == "error" and first.error.error_message == "Unknown error (no error details in response)"
    second = run(make_model(server), hello())[-1]
    assert second.type == "error" and "boom" in second.error.error_message


def test_http_errors_and_overflow(server: FakeModelServer) -> None:
    server.add(Reply.http_error(500, "Internal failure"),
               Reply.http_error(400, "Your input exceeds the context window of this model."))
    options = StreamOptions(api_key="k", max_retries=0)
    failed = run(make_model(server), hello(), options)[-1].error
    origin = f" [provider openai, POST {server.url}/v1/responses]"
    assert failed.error_message == "500 Internal failure" + origin and is_retryable_error(failed)
    overflow = run(make_model(server), hello(), options)[-1].error
    assert is_context_overflow(overflow) and not is_retryable_error(overflow)


def test_cancel_while_waiting_for_the_next_event(server: FakeModelServer) -> None:
    server.add(Reply(text=["kept ", "lost"], stall_after=8, stall_s=30))
    options = StreamOptions(api_key="k")

    async def go() -> list[AssistantMessageEvent]:
        events = []
        async for event in PROVIDER.stream(make_model(server), hello(), options):
            events.append(event)
            if event.type == "text_delta":
                options.signal.abort()
        return events
    final = asyncio.run(go())[-1]
    assert final.type == "error" and final.error.stop_reason == "aborted"
    assert final.error.text() == "kept "
