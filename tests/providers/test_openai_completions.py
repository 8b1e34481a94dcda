"""openai-completions through the real openai SDK against the fake server's Chat Completions wire."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from pi_plugins.openai_completions import PROVIDER

from pi_core.llm.overflow import is_context_overflow
from pi_core.llm.retry import RetryPolicy, is_retryable_error, stream_with_retry
from pi_core.providers import StreamOptions
from pi_core.testing.fake_server import FakeModelServer, Reply, ToolUse
from pi_core.types import (
    AssistantMessage,
    AssistantMessageEvent,
    Context,
    ImageContent,
    Model,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolDefinition,
    ToolResultMessage,
    UserMessage,
)

REFERENCE = Path("/work/shared/spec/reference/pi-first-request.openai-completions.json")
READ_TOOL = ToolDefinition(name="read", description="Read a file.", parameters={
    "type": "object", "required": ["path"], "properties": {"path": {"type": "string"}}})


@pytest.fixture
def server() -> Any:
    with FakeModelServer() as fake:
        yield fake


def make_model(server: FakeModelServer, **fields: Any) -> Model:
    defaults: dict[str, Any] = {"id": "fake-model", "api": "openai-completions", "provider": "fake",
                                    "base_url": server.base_url_for("openai-completions"),
                                    "cost": {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75}}
    return Model(**{**defaults, **fields})


def run(model: Model, context: Context, options: StreamOptions | None = None) -> list[AssistantMessageEvent]:
    async def go() -> list[AssistantMessageEvent]:
        return [e async for e in PROVIDER.stream(model, context, options or StreamOptions(api_key="test-key"))]
    return asyncio.run(go())


def hello(tools: list[ToolDefinition] | None = None) -> Context:
    return Context(system_prompt="You are pi.", messages=[UserMessage(content=[TextContent(text="Hello")])],
                   tools=tools)


def test_first_request_body_matches_pi_reference(server: FakeModelServer) -> None:
    server.add(Reply(text="hi"))
    run(make_model(server), hello([READ_TOOL]))
    body = server.requests[0].body
    reference = json.loads(REFERENCE.read_text())
    assert list(body) == list(reference)
    assert body["messages"] == [{"role": "system", "content": "You are pi."},
                                {"role": "user", "content": [{"type": "text", "text": "Hello"}]}]
    for key in ("stream", "stream_options", "store", "max_completion_tokens"):
        assert body[key] == reference[key]
    assert body["tools"] == [{"type": "function", "function": {
        "name": "read", "description": "Read a file.", "parameters": READ_TOOL.parameters, "strict": False}}]
    assert server.requests[0].headers["authorization"] == "Bearer test-key"


def test_text_thinking_and_tool_calls_stream_in_order(server: FakeModelServer) -> None:
    server.add(Reply(thinking="Let me look.", text="Reading both.", chunk_size=3, tool_calls=[
        ("read", {"path": "src/main.py", "offset": 10}), ToolUse("read", {"path": "README.md"}, id="call_b")]))
    events = run(make_model(server, reasoning=True), hello([READ_TOOL]))
    kinds = [e.type for e in events]
    assert kinds[0] == "start" and kinds[-1] == "done"
    assert kinds.count("toolcall_start") == 2 and kinds.count("toolcall_end") == 2
    assert kinds.count("toolcall_delta") > 6  # arguments arrive in many small pieces
    final = events[-1].message
    assert final.stop_reason == "toolUse"
    assert final.content[0] == ThinkingContent(thinking="Let me look.", thinking_signature="reasoning_content")
    assert final.content[1] == TextContent(text="Reading both.")
    calls = final.tool_calls()
    assert [c.arguments for c in calls] == [{"path": "src/main.py", "offset": 10}, {"path": "README.md"}]
    assert calls[1].id == "call_b"
    # as in Pi, Chat Completions blocks stay open while later ones stream (content and tool-call deltas
    # may interleave) and all end at the stream's end, in content order (issue 16 item 16)
    bounds = [(e.type, e.content_index) for e in events[1:-1] if e.type.endswith(("_start", "_end"))]
    assert bounds == [("thinking_start", 0), ("text_start", 1), ("toolcall_start", 2), ("toolcall_start", 3),
                      ("thinking_end", 0), ("text_end", 1), ("toolcall_end", 2), ("toolcall_end", 3)]
    # partial arguments are parsed while streaming
    partial_args = [e.partial.content[e.content_index].arguments for e in events if e.type == "toolcall_delta"]
    assert {"path": "src/ma"} in partial_args or any(a.get("path", "").startswith("src/m") for a in partial_args)


def test_reasoning_model_uses_developer_role_and_effort(server: FakeModelServer) -> None:
    server.add(Reply(text="ok"))
    model = make_model(server, reasoning=True, thinking_level_map={"xhigh": "xhigh"})
    run(model, hello(), StreamOptions(api_key="k", reasoning="xhigh"))
    body = server.requests[0].body
    assert body["messages"][0]["role"] == "developer"
    assert body["reasoning_effort"] == "xhigh"


def test_unmapped_xhigh_is_clamped_to_high(server: FakeModelServer) -> None:
    server.add(Reply(text="ok"))
    run(make_model(server, reasoning=True), hello(), StreamOptions(api_key="k", reasoning="xhigh"))
    assert server.requests[0].body["reasoning_effort"] == "high"


@pytest.mark.parametrize("provider,base,expected", [
    ("zai", "https://api.z.ai/api/coding/paas/v4", {"enable_thinking": True}),
    ("openrouter", "https://openrouter.ai/api/v1", {"reasoning": {"effort": "medium"}}),
    ("deepseek", "https://api.deepseek.com", {"thinking": {"type": "enabled"}, "reasoning_effort": "medium"}),
])
def test_thinking_formats_by_provider(server: FakeModelServer, provider: str, base: str,
                                      expected: dict[str, Any]) -> None:
    server.add(Reply(text="ok"))
    model = make_model(server, provider=provider, reasoning=True)
    # The detection looks at the provider id; the URL stays the fake server's.
    run(model, hello(), StreamOptions(api_key="k", reasoning="medium"))
    body = server.requests[0].body
    for key, value in expected.items():
        assert body[key] == value


def test_non_standard_servers_get_compat_defaults(server: FakeModelServer) -> None:
    server.add(Reply(text="ok"), Reply(text="ok"))
    run(make_model(server, provider="cerebras", reasoning=True), hello([READ_TOOL]))
    body = server.requests[0].body
    assert "store" not in body and body["messages"][0]["role"] == "system"
    run(make_model(server, compat={"maxTokensField": "max_tokens", "supportsStrictMode": False,
                                   "supportsUsageInStreaming": False}), hello([READ_TOOL]))
    body = server.requests[1].body
    assert body["max_tokens"] == 16384 and "max_completion_tokens" not in body
    assert "strict" not in body["tools"][0]["function"] and "stream_options" not in body


def test_usage_and_cost(server: FakeModelServer) -> None:
    server.add(Reply(text="hi", input_tokens=1_000_000, output_tokens=1_000_000, cache_read_tokens=0))
    final = run(make_model(server), hello())[-1].message
    usage = final.usage
    assert (usage.input, usage.output, usage.total_tokens) == (1_000_000, 1_000_000, 2_000_000)
    assert usage.cost.input == pytest.approx(3) and usage.cost.output == pytest.approx(15)
    assert usage.cost.total == pytest.approx(18)


def test_cached_tokens_are_taken_out_of_input(server: FakeModelServer) -> None:
    server.add(Reply(text="hi", input_tokens=100, output_tokens=7, cache_read_tokens=40))
    usage = run(make_model(server), hello())[-1].message.usage
    assert (usage.input, usage.cache_read, usage.output, usage.total_tokens) == (100, 40, 7, 147)


def test_history_conversion_tool_results_and_images(server: FakeModelServer) -> None:
    server.add(Reply(text="done"))
    model = make_model(server, input=["text", "image"])
    earlier = AssistantMessage(api="openai-completions", provider="fake", model="fake-model", stop_reason="toolUse",
                               content=[TextContent(text="Looking."),
                                        ToolCall(id="call_1", name="read", arguments={"path": "a.png"})])
    result = ToolResultMessage(tool_call_id="call_1", tool_name="read",
                               content=[ImageContent(data="AAAA", mime_type="image/png")])
    context = Context(messages=[UserMessage(content="look"), earlier, result, UserMessage(content="and?")],
                      tools=[READ_TOOL])
    run(model, context)
    messages = server.requests[0].body["messages"]
    assert messages[1] == {"role": "assistant", "content": "Looking.", "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "read", "arguments": '{"path":"a.png"}'}}]}
    assert messages[2] == {"role": "tool", "content": "(see attached image)", "tool_call_id": "call_1"}
    assert messages[3]["role"] == "user"
    assert messages[3]["content"][0] == {"type": "text", "text": "Attached image(s) from tool result:"}
    assert messages[3]["content"][1]["image_url"]["url"] == "data:image/png;base64,AAAA"


def test_tools_list_sent_when_history_has_tool_traffic(server: FakeModelServer) -> None:
    server.add(Reply(text="ok"))
    earlier = AssistantMessage(api="openai-completions", provider="fake", model="fake-model", stop_reason="toolUse",
                               content=[ToolCall(id="c1", name="read", arguments={})])
    run(make_model(server), Context(messages=[UserMessage(content="x"), earlier]))
    body = server.requests[0].body
    assert body["tools"] == []
    assert body["messages"][-1] == {"role": "tool", "content": "No result provided", "tool_call_id": "c1"}


def test_length_and_unknown_finish_reasons(server: FakeModelServer) -> None:
    server.add(Reply(text="cut", stop_reason="length"), Reply(text="bad", stop_reason="content_filter"))
    assert run(make_model(server), hello())[-1].message.stop_reason == "length"
    final = run(make_model(server), hello())[-1]
    assert final.type == "error" and final.error.error_message == "Provider finish_reason: content_filter"
    assert final.error.content == [TextContent(text="bad")]


def test_http_429_is_an_error_event_the_retry_layer_recognises(server: FakeModelServer) -> None:
    server.add(Reply.http_error(429, "Rate limit reached"))
    events = run(make_model(server), hello(), StreamOptions(api_key="k", max_retries=0))
    assert [e.type for e in events] == ["error"]
    message = events[0].error
    origin = f" [provider fake, POST {server.url}/v1/chat/completions]"
    assert message.stop_reason == "error" and message.error_message == "429 Rate limit reached" + origin
    assert is_retryable_error(message)


def test_shared_retry_layer_recovers_from_429_and_5xx(server: FakeModelServer) -> None:
    server.add(Reply.rate_limited(retry_after=0), Reply.http_error(503), Reply(text="finally"))

    async def go() -> list[AssistantMessageEvent]:
        stream = stream_with_retry(PROVIDER, make_model(server), hello(), StreamOptions(api_key="k"),
                                   RetryPolicy(max_retries=3, base_delay_s=0))
        return [e async for e in stream]
    events = asyncio.run(go())
    assert next(e.type for e in events) == "start" and events[-1].message.text() == "finally"
    assert len(server.requests) == 3


def test_connection_drop_mid_stream_keeps_partial_text(server: FakeModelServer) -> None:
    server.add(Reply(text="partial answer here", chunk_size=4, disconnect_after=3))
    final = run(make_model(server), hello())[-1]
    assert final.type == "error" and final.error.stop_reason == "error"
    assert final.error.text().startswith("part")
    assert is_retryable_error(final.error)


def test_context_overflow_is_recognised(server: FakeModelServer) -> None:
    server.add(Reply.http_error(400, "This model's maximum context length is 128000 tokens. "
                                     "However, your messages resulted in 130000 tokens."))
    final = run(make_model(server), hello(), StreamOptions(api_key="k", max_retries=0))[-1].error
    assert final.error_message.startswith("400 This model's maximum context length is 128000 tokens")
    assert is_context_overflow(final) and not is_retryable_error(final)


def test_cancel_mid_stream_ends_promptly_as_aborted(server: FakeModelServer) -> None:
    server.add(Reply(text=["first ", "second"], stall_after=3, stall_s=30))
    options = StreamOptions(api_key="k")

    async def go() -> list[AssistantMessageEvent]:
        events = []
        async for event in PROVIDER.stream(make_model(server), hello(), options):
            events.append(event)
            if event.type == "text_delta":
                options.signal.abort()
        return events
    events = asyncio.run(go())
    final = events[-1]
    assert final.type == "error" and final.reason == "aborted"
    assert final.error.stop_reason == "aborted" and final.error.error_message == "Request was aborted"
    assert final.error.text() == "first "


def test_missing_key_is_an_error_event(server: FakeModelServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    events = run(make_model(server), hello(), StreamOptions())
    assert [e.type for e in events] == ["error"]
    assert "OPENAI_API_KEY" in events[0].error.error_message
    assert server.requests == []


def test_on_payload_may_replace_the_body(server: FakeModelServer) -> None:
    server.add(Reply(text="ok"))
    seen: list[int] = []

    def on_payload(body: dict[str, Any], model: Model) -> dict[str, Any]:
        return {**body, "temperature": 0.25}

    run(make_model(server), hello(), StreamOptions(api_key="k", on_payload=on_payload,
                                                   on_response=lambda info, _m: seen.append(info["status"])))
    assert server.requests[0].body["temperature"] == 0.25 and seen == [200]


def test_compat_flags_shape_the_history(server: FakeModelServer) -> None:
    server.add(Reply(text="ok"))
    model = make_model(server, compat={"requiresToolResultName": True, "requiresAssistantAfterToolResult": True,
                                       "requiresThinkingAsText": True})
    earlier = AssistantMessage(api="openai-completions", provider="fake", model="fake-model", stop_reason="toolUse",
                               content=[ThinkingContent(thinking="why", thinking_signature="reasoning_content"),
                                        ToolCall(id="c1", name="read", arguments={"path": "a"})])
    result = ToolResultMessage(tool_call_id="c1", tool_name="read", content=[TextContent(text="A")])
    run(model, Context(messages=[UserMessage(content="x"), earlier, result, UserMessage(content="y")]))
    messages = server.requests[0].body["messages"]
    assert messages[1]["content"] == "why" and "reasoning_content" not in messages[1]
    assert messages[2] == {"role": "tool", "content": "A", "tool_call_id": "c1", "name": "read"}
    assert messages[3] == {"role": "assistant", "content": "I have processed the tool results."}
    assert messages[4] == {"role": "user", "content": "y"}


def test_mistral_gets_nine_character_tool_ids_and_prompt_mode(server: FakeModelServer) -> None:
    server.add(Reply(text="ok"))
    model = make_model(server, provider="mistral", id="magistral-medium-latest", reasoning=True)
    earlier = AssistantMessage(api="anthropic-messages", provider="anthropic", model="claude", stop_reason="toolUse",
                               content=[ToolCall(id="toolu_01ABCdefGHIjkl", name="read", arguments={})])
    result = ToolResultMessage(tool_call_id="toolu_01ABCdefGHIjkl", tool_name="read", content=[TextContent(text="r")])
    run(model, Context(messages=[UserMessage(content="x"), earlier, result]), StreamOptions(api_key="k",
                                                                                          reasoning="high"))
    body = server.requests[0].body
    call_id = body["messages"][1]["tool_calls"][0]["id"]
    assert len(call_id) == 9 and call_id.isalnum() and body["messages"][2]["tool_call_id"] == call_id
    assert body["prompt_mode"] == "reasoning" and "reasoning_effort" not in body
    assert body["max_tokens"] == 16384 and "store" not in body


def test_prompt_cache_key_for_openai_hosts(server: FakeModelServer) -> None:
    server.add(Reply(text="ok"), Reply(text="ok"))
    run(make_model(server), hello(), StreamOptions(api_key="k", session_id="s1"))
    assert "prompt_cache_key" not in server.requests[0].body  # not api.openai.com, retention short
    run(make_model(server), hello(), StreamOptions(api_key="k", session_id="s1", cache_retention="long"))
    body = server.requests[1].body
    assert body["prompt_cache_key"] == "s1" and body["prompt_cache_retention"] == "24h"


def test_already_aborted_request_sends_nothing(server: FakeModelServer) -> None:
    options = StreamOptions(api_key="k")
    options.signal.abort()
    events = run(make_model(server), hello(), options)
    assert [e.type for e in events] == ["error"] and events[0].error.stop_reason == "aborted"
    assert events[0].error.usage.total_tokens == 0 and server.requests == []


def test_openrouter_anthropic_models_get_cache_markers(server: FakeModelServer) -> None:
    server.add(Reply(text="ok"))
    model = make_model(server, provider="openrouter", id="anthropic/claude-sonnet-4.6")
    run(model, hello([READ_TOOL]), StreamOptions(api_key="k", cache_retention="long"))
    body = server.requests[0].body
    marker = {"type": "ephemeral", "ttl": "1h"}
    assert body["messages"][0]["content"] == [{"type": "text", "text": "You are pi.", "cache_control": marker}]
    assert body["messages"][1]["content"][-1]["cache_control"] == marker
    assert body["tools"][-1]["cache_control"] == marker
