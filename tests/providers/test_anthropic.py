"""The anthropic-messages plugin, driven through the real SDK against the fake server."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any

import pytest
from pi_plugins.anthropic_messages import PROVIDER as ANTHROPIC
from pi_plugins.anthropic_messages import pi_providers

from pi_core.llm.overflow import is_context_overflow
from pi_core.providers import StreamOptions
from pi_core.testing.fake_server import (
    FakeModelServer,
    RedactedThinking,
    Reply,
    Text,
    ToolUse,
)
from pi_core.testing.streams import (
    anthropic_model,
    assert_protocol,
    collect,
    final,
    options,
    types,
    user_context,
)
from pi_core.types import (
    AssistantMessage,
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

REFERENCE = Path("/work/shared/spec/reference")


def run(server: FakeModelServer, *replies: Reply, context: Context | None = None, **opts: Any):
    server.add(*replies)
    model_fields = opts.pop("model", {})
    model = anthropic_model(server, **model_fields)
    events = collect(ANTHROPIC.stream(model, context or user_context(), options(**opts)))
    assert_protocol(events)
    return events


def test_plugin_registers_the_api() -> None:
    assert [p.api for p in pi_providers()] == ["anthropic-messages"]


def test_text_reply(pi_fake_server: FakeModelServer) -> None:
    events = run(pi_fake_server, Reply(text="Hello world, how are you?"))
    assert types(events)[:3] == ["start", "text_start", "text_delta"]
    assert types(events)[-2:] == ["text_end", "done"]
    assert len([e for e in events if e.type == "text_delta"]) > 3
    message = final(events)
    assert message.text() == "Hello world, how are you?"
    assert (message.stop_reason, message.api, message.provider, message.model) == (
        "stop", "anthropic-messages", "anthropic", "claude-test")
    assert message.response_id == "msg_fake_1"
    assert events[-2].content == "Hello world, how are you?"


def test_thinking_then_text_with_signature(pi_fake_server: FakeModelServer) -> None:
    events = run(pi_fake_server, Reply(thinking="Let me think.", text="Answer", thinking_signature="sig-123"))
    message = final(events)
    assert [b.type for b in message.content] == ["thinking", "text"]
    thinking = message.content[0]
    assert isinstance(thinking, ThinkingContent)
    assert (thinking.thinking, thinking.thinking_signature) == ("Let me think.", "sig-123")
    assert "thinking_delta" in types(events)


def test_redacted_thinking(pi_fake_server: FakeModelServer) -> None:
    events = run(pi_fake_server, Reply(blocks=[RedactedThinking("opaque=="), Text("ok")]))
    block = final(events).content[0]
    assert isinstance(block, ThinkingContent)
    assert (block.thinking, block.redacted, block.thinking_signature) == ("[Reasoning redacted]", True, "opaque==")
    assert types(events)[1:3] == ["thinking_start", "thinking_end"]


def test_one_tool_call_streams_partial_arguments(pi_fake_server: FakeModelServer) -> None:
    args = {"path": "src/deep/file.py", "offset": 10, "limit": 50}
    pi_fake_server.add(Reply(text="Reading.", tool_calls=[ToolUse("read", args, id="toolu_1")]))
    snapshots: list[dict[str, Any]] = []

    async def go() -> list:
        events = []
        async for event in ANTHROPIC.stream(anthropic_model(pi_fake_server), user_context(), options()):
            if event.type == "toolcall_delta":
                block = event.partial.content[event.content_index]  # type: ignore[union-attr,index]
                assert isinstance(block.arguments, dict)  # always an object while streaming
                snapshots.append(dict(block.arguments))
            events.append(event)
        return events

    events = asyncio.run(go())
    assert_protocol(events)
    assert len(snapshots) > 5
    assert snapshots[0] == {} and snapshots[-1] == args
    assert any(s.get("path") not in (None, args["path"]) and args["path"].startswith(s["path"]) for s in snapshots)
    end = next(e for e in events if e.type == "toolcall_end")
    assert end.tool_call is not None and end.tool_call.arguments == args
    message = final(events)
    assert message.stop_reason == "toolUse"
    assert message.tool_calls()[0].to_json() == {"type": "toolCall", "id": "toolu_1", "name": "read", "arguments": args}


def test_several_tool_calls_in_order(pi_fake_server: FakeModelServer) -> None:
    events = run(pi_fake_server, Reply(tool_calls=[("read", {"path": "a"}), ("bash", {"command": "ls -la"}),
                                                   ("write", {"path": "b", "content": "x\ny"})]))
    calls = final(events).tool_calls()
    assert [(c.name, c.arguments) for c in calls] == [
        ("read", {"path": "a"}), ("bash", {"command": "ls -la"}), ("write", {"path": "b", "content": "x\ny"})]
    assert len({c.id for c in calls}) == 3
    assert [e.content_index for e in events if e.type == "toolcall_end"] == [0, 1, 2]


def test_malformed_tool_arguments_become_a_best_effort_object(pi_fake_server: FakeModelServer) -> None:
    events = run(pi_fake_server, Reply(tool_calls=[ToolUse("read", raw_arguments='{"path": "a.txt"')]))
    assert final(events).tool_calls()[0].arguments == {"path": "a.txt"}
    assert final(events).stop_reason == "toolUse"


def test_usage_and_cost(pi_fake_server: FakeModelServer) -> None:
    events = run(pi_fake_server, Reply(text="x", input_tokens=1_000_000, output_tokens=1_000_000,
                                       cache_read_tokens=1_000_000, cache_write_tokens=1_000_000))
    usage = final(events).usage
    assert (usage.input, usage.output, usage.cache_read, usage.cache_write, usage.total_tokens) == (
        1_000_000, 1_000_000, 1_000_000, 1_000_000, 4_000_000)
    assert (usage.cost.input, usage.cost.output) == (3, 15)
    assert usage.cost.cache_read == pytest.approx(0.3) and usage.cost.cache_write == pytest.approx(3.75)
    assert usage.cost.total == pytest.approx(22.05)


@pytest.mark.parametrize("wire,reason", [("max_tokens", "length"), ("end_turn", "stop"), ("stop_sequence", "stop"),
                                         ("pause_turn", "stop")])
def test_stop_reasons(pi_fake_server: FakeModelServer, wire: str, reason: str) -> None:
    assert final(run(pi_fake_server, Reply(text="t", stop_reason=wire))).stop_reason == reason


def test_refusal_is_an_unknown_error(pi_fake_server: FakeModelServer) -> None:
    message = final(run(pi_fake_server, Reply(text="no", stop_reason="refusal")))
    assert (message.stop_reason, message.error_message) == ("error", "An unknown error occurred")
    assert message.text() == "no"


def test_unknown_stop_reason(pi_fake_server: FakeModelServer) -> None:
    message = final(run(pi_fake_server, Reply(text="t", stop_reason="model_context_window_exceeded_x")))
    assert message.error_message == "Unhandled stop reason: model_context_window_exceeded_x"


def test_first_request_matches_pis_wire_format(pi_fake_server: FakeModelServer) -> None:
    reference = json.loads((REFERENCE / "pi-first-request.anthropic.json").read_text())
    tools = [ToolDefinition(name=t["name"], description=t["description"],
                            parameters={**t["input_schema"], "additionalProperties": False})
             for t in json.loads((REFERENCE / "pi-tools-all.json").read_text())]
    tools = [t for t in tools if t.name in {r["name"] for r in reference["tools"]}]
    context = Context(system_prompt=reference["system"][0]["text"], messages=[UserMessage(content="Hello")], tools=tools)
    run(pi_fake_server, Reply(text="hi"), context=context, model={"id": "fake-model"})
    request = pi_fake_server.requests[0]
    assert request.body == reference
    assert request.headers["anthropic-beta"] == "interleaved-thinking-2025-05-14"
    assert request.headers["anthropic-dangerous-direct-browser-access"] == "true"
    assert request.headers["accept"] == "application/json"


def test_nested_additional_properties_survive(pi_fake_server: FakeModelServer) -> None:
    schema = {"type": "object", "additionalProperties": False, "$schema": "x",
              "properties": {"edits": {"type": "array", "items": {"type": "object", "additionalProperties": False}}}}
    run(pi_fake_server, Reply(text="k"), context=user_context(tools=[ToolDefinition(name="e", description="d", parameters=schema)]))
    sent = pi_fake_server.requests[0].body["tools"][0]["input_schema"]
    assert sent == {"type": "object", "properties": schema["properties"], "required": []}


def test_cache_retention_none_and_long(pi_fake_server: FakeModelServer) -> None:
    tools = [ToolDefinition(name="t", description="d", parameters={"type": "object", "properties": {}})]
    context = user_context(system_prompt="sys", tools=tools)
    run(pi_fake_server, Reply(text="a"), context=context, cache_retention="none")
    run(pi_fake_server, Reply(text="b"), context=context, cache_retention="long")
    none, long = (r.body for r in pi_fake_server.requests)
    assert "cache_control" not in json.dumps(none)
    assert long["system"][0]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    assert long["tools"][-1]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    assert long["messages"][-1]["content"][-1]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}


def test_budget_thinking(pi_fake_server: FakeModelServer) -> None:
    run(pi_fake_server, Reply(text="a"), reasoning="medium", temperature=0.5,
        model={"reasoning": True, "max_tokens": 64000}, max_tokens=32000)
    body = pi_fake_server.requests[0].body
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 8192, "display": "summarized"}
    assert body["max_tokens"] == 40192
    assert "temperature" not in body


def test_adaptive_thinking_and_effort_map(pi_fake_server: FakeModelServer) -> None:
    adaptive = {"id": "claude-opus-4-6", "reasoning": True, "thinking_level_map": {"xhigh": "max"}}
    run(pi_fake_server, Reply(text="a"), reasoning="xhigh", model=adaptive)
    run(pi_fake_server, Reply(text="b"), reasoning="minimal", model=adaptive)
    first, second = (r for r in pi_fake_server.requests)
    assert first.body["thinking"] == {"type": "adaptive", "display": "summarized"}
    assert first.body["output_config"] == {"effort": "max"}
    assert second.body["output_config"] == {"effort": "low"}
    assert "anthropic-beta" not in first.headers


def test_thinking_off_on_a_reasoning_model_is_disabled(pi_fake_server: FakeModelServer) -> None:
    run(pi_fake_server, Reply(text="a"), temperature=0.2, model={"reasoning": True})
    body = pi_fake_server.requests[0].body
    assert body["thinking"] == {"type": "disabled"} and body["temperature"] == 0.2


def test_eager_streaming_off_uses_the_beta_header(pi_fake_server: FakeModelServer) -> None:
    tools = [ToolDefinition(name="t", description="d", parameters={"type": "object", "properties": {}})]
    run(pi_fake_server, Reply(text="a"), context=user_context(tools=tools),
        model={"compat": {"supportsEagerToolInputStreaming": False}})
    request = pi_fake_server.requests[0]
    assert "eager_input_streaming" not in request.body["tools"][0]
    assert request.headers["anthropic-beta"] == "interleaved-thinking-2025-05-14,fine-grained-tool-streaming-2025-05-14"


def test_headers_metadata_tool_choice_and_on_payload(pi_fake_server: FakeModelServer) -> None:
    seen: list[dict[str, Any]] = []

    def on_payload(payload: dict[str, Any], model: Any) -> dict[str, Any]:
        seen.append(payload)
        return {**payload, "stop_sequences": ["END"]}

    responses: list[dict[str, Any]] = []
    run(pi_fake_server, Reply(text="a"), headers={"x-extra": "1"}, metadata={"user_id": "u1", "other": 2},
        tool_choice="any", on_payload=on_payload, on_response=lambda r, m: responses.append(r),
        model={"headers": {"x-model": "m"}})
    request = pi_fake_server.requests[0]
    assert request.body["stop_sequences"] == ["END"] and seen[0]["model"] == "claude-test"
    assert request.body["metadata"] == {"user_id": "u1"}
    assert request.body["tool_choice"] == {"type": "any"}
    assert (request.headers["x-extra"], request.headers["x-model"]) == ("1", "m")
    assert responses[0]["status"] == 200 and responses[0]["headers"]["content-type"] == "text/event-stream"


def test_history_conversion(pi_fake_server: FakeModelServer) -> None:
    image = ImageContent(data="aGk=", mime_type="image/png")
    foreign = AssistantMessage(api="openai-responses", provider="openai", model="gpt-5", stop_reason="toolUse",
                               content=[ThinkingContent(thinking="plan", thinking_signature="{}"),
                                        TextContent(text="Using tools"),
                                        ToolCall(id="call_1|fc/item", name="read", arguments={"path": "a"}),
                                        ToolCall(id="call_2|fc_2", name="ls", arguments={})])
    context = Context(system_prompt="s", messages=[
        UserMessage(content=[TextContent(text="look"), image]), foreign,
        ToolResultMessage(tool_call_id="call_1|fc/item", tool_name="read", content=[TextContent(text="l1"), TextContent(text="l2")]),
        ToolResultMessage(tool_call_id="call_2|fc_2", tool_name="ls", content=[image], is_error=True),
        AssistantMessage(api="anthropic-messages", provider="anthropic", model="claude-test", stop_reason="error",
                         content=[TextContent(text="broken")]),
        UserMessage(content="\ud83d next")])
    run(pi_fake_server, Reply(text="ok"), context=context, model={"input": ["text", "image"]})
    messages = pi_fake_server.requests[0].body["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "user"]
    assert messages[0]["content"][1] == {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "aGk="}}
    assert messages[1]["content"] == [
        {"type": "text", "text": "plan"}, {"type": "text", "text": "Using tools"},
        {"type": "tool_use", "id": "call_1_fc_item", "name": "read", "input": {"path": "a"}},
        {"type": "tool_use", "id": "call_2_fc_2", "name": "ls", "input": {}}]
    results = messages[2]["content"]
    assert results[0] == {"type": "tool_result", "tool_use_id": "call_1_fc_item", "content": "l1\nl2", "is_error": False}
    assert results[1]["is_error"] is True and results[1]["content"][0] == {"type": "text", "text": "(see attached image)"}
    assert messages[3]["content"] == [{"type": "text", "text": " next", "cache_control": {"type": "ephemeral"}}]


def test_oauth_token_uses_claude_code_identity_and_tool_names(pi_fake_server: FakeModelServer) -> None:
    tools = [ToolDefinition(name=n, description="d", parameters={"type": "object", "properties": {}})
             for n in ("read", "todowrite", "find")]
    events = run(pi_fake_server, Reply(tool_calls=[("Read", {"path": "a"}), ("TodoWrite", {}), ("find", {})]),
                 context=user_context(system_prompt="mine", tools=tools), api_key="sk-ant-oat01-test")
    request = pi_fake_server.requests[0]
    assert [t["name"] for t in request.body["tools"]] == ["Read", "TodoWrite", "find"]
    assert next(b["text"] for b in request.body["system"]) == "You are Claude Code, Anthropic's official CLI for Claude."
    assert request.headers["authorization"] == "Bearer sk-ant-oat01-test"
    assert request.headers["anthropic-beta"].startswith("claude-code-20250219,oauth-2025-04-20")
    assert request.headers["x-app"] == "cli" and request.headers["user-agent"].startswith("claude-cli/")
    assert [c.name for c in final(events).tool_calls()] == ["read", "todowrite", "find"]


# --- failures --------------------------------------------------------------------------------------


def test_missing_api_key(pi_fake_server: FakeModelServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_OAUTH_TOKEN", raising=False)
    model = anthropic_model(pi_fake_server)
    events = collect(ANTHROPIC.stream(model, user_context(), StreamOptions()))
    assert types(events) == ["error"]
    assert final(events).error_message == "No API key for provider: anthropic"
    assert pi_fake_server.requests == []


@pytest.mark.parametrize("reply,expected", [
    (Reply.rate_limited(retry_after=1), '429 {"type": "error", "error": {"type": "rate_limit_error", "message": "Rate limit exceeded"}}'),
    (Reply.http_error(500), '500 {"type": "error", "error": {"type": "api_error", "message": "Internal server error"}}'),
    (Reply.overloaded(), '529 {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}'),
    (Reply.http_error(400, body=""), "400 status code (no body)"),
])
def test_http_errors_are_one_error_event_without_start(pi_fake_server: FakeModelServer, reply: Reply, expected: str) -> None:
    events = run(pi_fake_server, reply)
    assert types(events) == ["error"]
    message = final(events)
    # The SDK's wording, then which provider and URL were tried.
    origin = f" [provider anthropic, POST {pi_fake_server.url}/v1/messages]"
    assert (message.stop_reason, message.error_message) == ("error", expected + origin)


def test_transport_retries_when_asked(pi_fake_server: FakeModelServer) -> None:
    events = run(pi_fake_server, Reply.http_error(500, headers={"retry-after-ms": "10"}), Reply(text="second"),
                 max_retries=1)
    assert final(events).text() == "second"
    assert len(pi_fake_server.requests) == 2


def test_in_band_overloaded_error_keeps_partial_content(pi_fake_server: FakeModelServer) -> None:
    events = run(pi_fake_server, Reply(text="partial answer", stream_error="overloaded_error", error_message="Overloaded"))
    message = final(events)
    assert message.stop_reason == "error" and message.text() == "partial answer"
    assert json.loads(message.error_message or "") == {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    assert message.usage.input == 10


def test_connection_reset_mid_stream(pi_fake_server: FakeModelServer) -> None:
    events = run(pi_fake_server, Reply(text="abcdefgh", disconnect_after="content"))
    message = final(events)
    assert message.stop_reason == "error" and message.text() == "abcdefgh"
    assert message.error_message
    assert types(events)[0] == "start"


def test_stream_without_message_stop(pi_fake_server: FakeModelServer) -> None:
    message = final(run(pi_fake_server, Reply(text="a", empty=True)))
    assert message.error_message == "Anthropic stream ended before message_stop"


def test_malformed_sse(pi_fake_server: FakeModelServer) -> None:
    message = final(run(pi_fake_server, Reply(text="abc", malformed_sse_after=3)))
    assert message.stop_reason == "error" and "invalid JSON" in (message.error_message or "")


def test_connection_refused() -> None:
    with FakeModelServer() as server:
        model = anthropic_model(server)
    events = collect(ANTHROPIC.stream(model, user_context(), options()))
    assert types(events) == ["error"]
    assert "Connection error" in (final(events).error_message or "")


def test_context_overflow_is_recognised(pi_fake_server: FakeModelServer) -> None:
    events = run(pi_fake_server, Reply.http_error(400, "prompt is too long: 213462 tokens > 200000 maximum",
                                                  error_type="invalid_request_error"))
    assert is_context_overflow(final(events))


def test_abort_mid_stream_keeps_what_arrived(pi_fake_server: FakeModelServer) -> None:
    pi_fake_server.add(Reply(text="first part", stall_after="content", stall_s=30))
    model = anthropic_model(pi_fake_server)
    opts = options()

    async def go() -> list:
        seen = []
        async for event in ANTHROPIC.stream(model, user_context(), opts):
            seen.append(event)
            if event.type == "text_delta" and event.partial and event.partial.text() == "first part":
                threading.Timer(0.05, opts.signal.abort).start()  # from another thread, like Ctrl-C
        return seen

    events = asyncio.run(asyncio.wait_for(go(), 10))
    assert_protocol(events)
    message = final(events)
    assert (message.stop_reason, message.error_message) == ("aborted", "Request was aborted")
    assert message.text() == "first part"


def test_abort_before_the_request(pi_fake_server: FakeModelServer) -> None:
    opts = options()
    opts.signal.abort()
    events = collect(ANTHROPIC.stream(anthropic_model(pi_fake_server), user_context(), opts))
    assert types(events) == ["error"] and final(events).stop_reason == "aborted"


def mock_stream(text_json: str) -> str:
    return (
        'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_m","type":"message","role":"assistant",'
        '"model":"m","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":3,"output_tokens":1}}}\n\n'
        'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n'
        'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":'
        + text_json + '}}\n\n'
        'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n'
        'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":2}}\n\n'
        'event: message_stop\ndata: {"type":"message_stop"}\n\n'
    )


def stream_mocked(body: str, seen: list | None = None) -> list:
    import httpx2

    def handler(request: httpx2.Request) -> httpx2.Response:
        if seen is not None:
            seen.append(request)
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=body.encode())

    async def go() -> list:
        async with httpx2.AsyncClient(transport=httpx2.MockTransport(handler)) as http:
            model = Model(id="m", api="anthropic-messages", provider="anthropic", base_url="https://example.invalid")
            return [e async for e in ANTHROPIC.stream(model, user_context(), options(http_client=http))]

    events = asyncio.run(go())
    assert_protocol(events)
    return events


def test_event_json_with_raw_control_characters_is_repaired() -> None:
    # A raw tab and an invalid escape (\d) inside the event's JSON string; \n is a valid escape.
    events = stream_mocked(mock_stream('"tab\there \\d ok \\n"'))
    assert final(events).text() == "tab\there \\d ok \n"


def test_injected_http_client_with_mock_transport() -> None:
    seen: list = []
    events = stream_mocked(mock_stream('"mocked"'), seen)
    assert final(events).text() == "mocked" and final(events).usage.output == 2
    assert str(seen[0].url) == "https://example.invalid/v1/messages"


def test_one_provider_serves_several_event_loops(pi_fake_server: FakeModelServer) -> None:
    provider = ANTHROPIC
    pi_fake_server.add(Reply(text="one"), Reply(text="two"))
    model = anthropic_model(pi_fake_server)
    first = collect(provider.stream(model, user_context(), options()))
    second = collect(provider.stream(model, user_context(), options()))
    assert (final(first).text(), final(second).text()) == ("one", "two")


def test_entry_point_registers_the_provider(tmp_path: Path) -> None:
    from pi_core.loader.plugins import load_plugins
    from pi_core.registry import build_registry

    registry = build_registry(load_plugins(discover_extensions=False, project_dir=tmp_path, agent_dir=tmp_path))
    provider = registry.providers.items["anthropic-messages"]
    assert registry.providers.owner["anthropic-messages"] == "anthropic-messages"
    assert provider.api == "anthropic-messages"


def test_same_model_replay_keeps_signed_and_redacted_thinking(pi_fake_server: FakeModelServer) -> None:
    earlier = AssistantMessage(api="anthropic-messages", provider="anthropic", model="claude-test", stop_reason="toolUse",
                               content=[ThinkingContent(thinking="plan", thinking_signature="sig-1"),
                                        ThinkingContent(thinking="[Reasoning redacted]", thinking_signature="blob",
                                                        redacted=True),
                                        ThinkingContent(thinking="unsigned", thinking_signature=None),
                                        TextContent(text="  "),
                                        ToolCall(id="toolu_01", name="read", arguments={"path": "a"})])
    context = Context(messages=[UserMessage(content="go"), earlier,
                                ToolResultMessage(tool_call_id="toolu_01", tool_name="read", content=[])])
    run(pi_fake_server, Reply(text="ok"), context=context)
    messages = pi_fake_server.requests[0].body["messages"]
    assert messages[1]["content"] == [
        {"type": "thinking", "thinking": "plan", "signature": "sig-1"},
        {"type": "redacted_thinking", "data": "blob"},
        {"type": "text", "text": "unsigned"},
        {"type": "tool_use", "id": "toolu_01", "name": "read", "input": {"path": "a"}}]
    assert messages[2]["content"] == [{"type": "tool_result", "tool_use_id": "toolu_01", "content": "", "is_error": False,
                                       "cache_control": {"type": "ephemeral"}}]
