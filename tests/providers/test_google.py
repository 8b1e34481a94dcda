"""google-generative-ai over httpx2 against the fake server's Gemini SSE wire."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pi_plugins.google_generative_ai import PROVIDER

from pi_core.llm.overflow import is_context_overflow
from pi_core.llm.retry import RetryPolicy, is_retryable_error, stream_with_retry
from pi_core.providers import StreamOptions
from pi_core.testing.fake_server import FakeModelServer, Reply
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

READ_TOOL = ToolDefinition(name="read", description="Read a file.", parameters={
    "type": "object", "required": ["path"], "properties": {"path": {"type": "string"}}})
SIGNATURE = "c2lnbmF0dXJl"  # valid base64


@pytest.fixture
def server() -> Any:
    with FakeModelServer() as fake:
        yield fake


def make_model(server: FakeModelServer, **fields: Any) -> Model:
    defaults: dict[str, Any] = {"id": "gemini-2.5-flash", "api": "google-generative-ai", "provider": "google",
                                    "reasoning": True, "base_url": server.base_url_for("google-generative-ai"),
                                    "cost": {"input": 0.3, "output": 2.5, "cacheRead": 0.03, "cacheWrite": 0}}
    return Model(**{**defaults, **fields})


def run(model: Model, context: Context, options: StreamOptions | None = None) -> list[AssistantMessageEvent]:
    async def go() -> list[AssistantMessageEvent]:
        return [e async for e in PROVIDER.stream(model, context, options or StreamOptions(api_key="test-key"))]
    return asyncio.run(go())


def hello(tools: list[ToolDefinition] | None = None) -> Context:
    return Context(system_prompt="You are pi.", messages=[UserMessage(content="Hello")], tools=tools)


def test_request_shape(server: FakeModelServer) -> None:
    server.add(Reply(text="hi"))
    run(make_model(server), hello([READ_TOOL]), StreamOptions(api_key="gk", reasoning="low"))
    request = server.requests[0]
    assert request.path.endswith("/v1beta/models/gemini-2.5-flash:streamGenerateContent")
    assert request.query.get("alt") == "sse" and request.headers["x-goog-api-key"] == "gk"
    body = request.body
    assert body["contents"] == [{"role": "user", "parts": [{"text": "Hello"}]}]
    assert body["systemInstruction"]["parts"] == [{"text": "You are pi."}]
    assert body["tools"] == [{"functionDeclarations": [
        {"name": "read", "description": "Read a file.", "parametersJsonSchema": READ_TOOL.parameters}]}]
    assert body["generationConfig"] == {"maxOutputTokens": 16384,
                                        "thinkingConfig": {"includeThoughts": True, "thinkingBudget": 2048}}


@pytest.mark.parametrize("model_id,level,expected", [
    ("gemini-2.5-pro", "high", {"includeThoughts": True, "thinkingBudget": 32768}),
    ("gemini-2.5-flash-lite", "minimal", {"includeThoughts": True, "thinkingBudget": 512}),
    ("gemini-2.0-thinking", "medium", {"includeThoughts": True, "thinkingBudget": -1}),
    ("gemini-2.5-pro", None, {"thinkingBudget": 0}),
    ("gemini-3.1-pro-preview", "minimal", {"includeThoughts": True, "thinkingLevel": "LOW"}),
    ("gemini-3.1-pro-preview", "medium", {"includeThoughts": True, "thinkingLevel": "HIGH"}),
    ("gemini-3-flash-preview", "medium", {"includeThoughts": True, "thinkingLevel": "MEDIUM"}),
    ("gemini-3-flash-preview", None, {"thinkingLevel": "MINIMAL"}),
    ("gemma-4-27b", "low", {"includeThoughts": True, "thinkingLevel": "MINIMAL"}),
])
def test_thinking_config_per_model(server: FakeModelServer, model_id: str, level: str | None,
                                   expected: dict[str, Any]) -> None:
    server.add(Reply(text="ok"))
    run(make_model(server, id=model_id), hello(), StreamOptions(api_key="k", reasoning=level))
    assert server.requests[0].body["generationConfig"]["thinkingConfig"] == expected


def test_text_thinking_and_function_calls(server: FakeModelServer) -> None:
    server.add(Reply(thinking="Consider.", text="Calling.", thinking_signature=SIGNATURE,
                     tool_calls=[("read", {"path": "a"}), ("read", {"path": "b"})],
                     input_tokens=100, cache_read_tokens=20, output_tokens=10))
    events = run(make_model(server), hello([READ_TOOL]))
    final = events[-1].message
    assert events[-1].type == "done" and final.stop_reason == "toolUse"
    assert isinstance(final.content[0], ThinkingContent) and final.content[0].thinking == "Consider."
    assert final.content[1] == TextContent(text="Calling.")
    calls = final.tool_calls()
    assert [c.arguments for c in calls] == [{"path": "a"}, {"path": "b"}]
    assert calls[0].id != calls[1].id
    # Gemini sends whole calls: one delta each, carrying the full arguments
    deltas = [e.delta for e in events if e.type == "toolcall_delta"]
    assert deltas == ['{"path":"a"}', '{"path":"b"}']
    assert (final.usage.input, final.usage.cache_read, final.usage.output) == (100, 20, 10)
    assert final.usage.cost.input == pytest.approx(100 * 0.3 / 1e6)


def test_history_replays_signatures_and_function_responses(server: FakeModelServer) -> None:
    server.add(Reply(text="ok"))
    model = make_model(server, id="gemini-3-pro-preview", input=["text", "image"])
    earlier = AssistantMessage(api="google-generative-ai", provider="google", model="gemini-3-pro-preview",
                               stop_reason="toolUse", content=[
                                   ThinkingContent(thinking="hm", thinking_signature=SIGNATURE),
                                   ToolCall(id="c1", name="read", arguments={"path": "x"}, thought_signature=SIGNATURE),
                                   ToolCall(id="c2", name="read", arguments={"path": "y"})])
    ok = ToolResultMessage(tool_call_id="c1", tool_name="read", content=[TextContent(text="X")])
    bad = ToolResultMessage(tool_call_id="c2", tool_name="read", is_error=True,
                            content=[ImageContent(data="AAAA", mime_type="image/png")])
    run(model, Context(messages=[UserMessage(content="go"), earlier, ok, bad]))
    contents = server.requests[0].body["contents"]
    assert contents[1]["role"] == "model"
    assert contents[1]["parts"][0] == {"thought": True, "text": "hm", "thoughtSignature": SIGNATURE}
    assert contents[1]["parts"][1]["thoughtSignature"] == SIGNATURE
    assert contents[1]["parts"][2]["thoughtSignature"] == "skip_thought_signature_validator"
    responses = contents[2]["parts"]
    assert responses[0] == {"functionResponse": {"name": "read", "response": {"output": "X"}}}
    assert responses[1]["functionResponse"]["response"] == {"error": "(see attached image)"}
    assert responses[1]["functionResponse"]["parts"] == [{"inlineData": {"mimeType": "image/png", "data": "AAAA"}}]


def test_other_models_thinking_becomes_plain_text(server: FakeModelServer) -> None:
    server.add(Reply(text="ok"))
    earlier = AssistantMessage(api="anthropic-messages", provider="anthropic", model="claude-x",
                               content=[ThinkingContent(thinking="old thoughts", thinking_signature="sig"),
                                        TextContent(text="answer")])
    run(make_model(server), Context(messages=[UserMessage(content="a"), earlier, UserMessage(content="b")]))
    parts = server.requests[0].body["contents"][1]["parts"]
    assert parts == [{"text": "old thoughts"}, {"text": "answer"}]


def test_max_tokens_and_safety_stops(server: FakeModelServer) -> None:
    server.add(Reply(text="cut", stop_reason="length"), Reply(text="no", stop_reason="SAFETY"))
    assert run(make_model(server), hello())[-1].message.stop_reason == "length"
    final = run(make_model(server), hello())[-1]
    assert final.type == "error" and final.error.error_message == "An unknown error occurred"


def test_http_errors_overflow_and_retry(server: FakeModelServer) -> None:
    server.add(Reply.http_error(400, "The input token count (1200000) exceeds the maximum number of tokens "
                                     "allowed (1048576)."))
    overflow = run(make_model(server), hello())[-1].error
    assert overflow.error_message.startswith("400 {")
    assert is_context_overflow(overflow) and not is_retryable_error(overflow)

    server.add(Reply.http_error(503, "The model is overloaded."), Reply(text="recovered"))

    async def go() -> list[AssistantMessageEvent]:
        stream = stream_with_retry(PROVIDER, make_model(server), hello(), StreamOptions(api_key="k"),
                                   RetryPolicy(max_retries=2, base_delay_s=0))
        return [e async for e in stream]
    events = asyncio.run(go())
    assert events[-1].type == "done" and events[-1].message.text() == "recovered"


def test_dropped_connection_is_a_retryable_error(server: FakeModelServer) -> None:
    server.add(Reply(text="abcdefgh", chunk_size=2, disconnect_after=2))
    final = run(make_model(server), hello())[-1]
    assert final.type == "error" and final.error.stop_reason == "error"
    assert final.error.text() == "abcd" and is_retryable_error(final.error)


def test_cancel_mid_stream(server: FakeModelServer) -> None:
    server.add(Reply(text=["one ", "two"], stall_after=1, stall_s=30))
    options = StreamOptions(api_key="k")

    async def go() -> list[AssistantMessageEvent]:
        events = []
        async for event in PROVIDER.stream(make_model(server), hello(), options):
            events.append(event)
            if event.type == "text_delta":
                options.signal.abort()
        return events
    final = asyncio.run(go())[-1]
    assert final.type == "error" and final.error.stop_reason == "aborted" and final.error.text() == "one "


def test_missing_key(server: FakeModelServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    events = run(make_model(server), hello(), StreamOptions())
    assert [e.type for e in events] == ["error"]
    assert events[0].error.error_message == "No API key for provider: google"
