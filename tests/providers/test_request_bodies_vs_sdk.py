"""The request bodies pi builds, checked against the vendor SDKs' own request types (issue 19).

pi no longer sends requests through the anthropic/openai SDKs, so their ``TypedDict`` request
parameters serve as the oracle: every key pi sends must be one the SDK knows, with a value of the
type it declares, over a history that exercises every block kind and the option combinations.
"""

from __future__ import annotations

from typing import Any

import pytest

from pi_core.providers import StreamOptions
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

from .sdk_oracle import problems

PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
READ = ToolDefinition(name="read", description="Read a file.", parameters={
    "type": "object", "required": ["path"], "properties": {"path": {"type": "string"}, "limit": {"type": "integer"}}})
OPTIONS = [
    {},
    {"reasoning": "high", "cache_retention": "long", "session_id": "sess-1"},
    {"reasoning": "minimal", "temperature": 0.2, "max_tokens": 1000, "tool_choice": "auto",
     "metadata": {"user_id": "u-1"}, "session_id": "sess-2"},
    {"cache_retention": "none", "temperature": 1.0},
]


def history(model: Model, signature: str = "sig-1") -> Context:
    earlier = AssistantMessage(api=model.api, provider=model.provider, model=model.id, stop_reason="toolUse", content=[
        ThinkingContent(thinking="plan", thinking_signature=signature),
        ThinkingContent(thinking="[Reasoning redacted]", thinking_signature="opaque", redacted=True),
        TextContent(text="Reading it."),
        ToolCall(id="call_1|fc_1", name="read", arguments={"path": "a.txt"})])
    other = AssistantMessage(api="other-api", provider="other", model="x", stop_reason="stop",
                             content=[ThinkingContent(thinking="foreign thoughts"), TextContent(text="hello")])
    return Context(system_prompt="You are pi.", tools=[READ], messages=[
        UserMessage(content="first"),
        other,
        UserMessage(content=[TextContent(text="look"), ImageContent(data=PIXEL, mime_type="image/png")]),
        earlier,
        ToolResultMessage(tool_call_id="call_1|fc_1", tool_name="read",
                          content=[TextContent(text="file body"), ImageContent(data=PIXEL, mime_type="image/png")]),
        ToolResultMessage(tool_call_id="call_2", tool_name="read", content=[TextContent(text="err")], is_error=True),
        UserMessage(content="go on"),
    ])


def model(api: str, model_id: str, **fields: Any) -> Model:
    return Model(id=model_id, api=api, provider=fields.pop("provider", "openai"), base_url="https://api.openai.com/v1",
                 reasoning=True, input=["text", "image"], max_tokens=32000, context_window=200000, **fields)


@pytest.mark.parametrize("options", OPTIONS)
@pytest.mark.parametrize("model_id", ["claude-sonnet-4-5", "claude-opus-4-6"])  # budget vs adaptive thinking
def test_anthropic_body_is_a_valid_message_create_params(options: dict[str, Any], model_id: str) -> None:
    from anthropic.types.message_create_params import MessageCreateParamsStreaming
    from pi_plugins.anthropic_messages.payload import build_params

    m = model("anthropic-messages", model_id, provider="anthropic")
    for oauth in (False, True):
        body = build_params(m, history(m), StreamOptions(**options), oauth)
        # Pi sends temperature (thinking off); this SDK's types dropped the deprecated field, the API takes it.
        body.pop("temperature", None)
        assert problems(body, MessageCreateParamsStreaming) == []


@pytest.mark.parametrize("options", OPTIONS)
@pytest.mark.parametrize("provider,base_url", [("openai", "https://api.openai.com/v1"),
                                               ("openrouter", "https://openrouter.ai/api/v1"),
                                               ("fake", "http://127.0.0.1:1/v1")])
def test_chat_completions_body_is_a_valid_completion_create_params(options: dict[str, Any], provider: str,
                                                                   base_url: str) -> None:
    from openai.types.chat.completion_create_params import (
        CompletionCreateParamsStreaming,
    )
    from pi_plugins.openai_completions.compat import get_compat
    from pi_plugins.openai_completions.convert import build_body

    m = model("openai-completions", "gpt-5", provider=provider).model_copy(update={"base_url": base_url})
    # On this wire a thinking block's signature names the field its text came in (DeepSeek and others).
    body = build_body(m, history(m, "reasoning_content"), StreamOptions(**options), get_compat(m))
    # Extensions of OpenAI-compatible servers that the SDK does not type: OpenRouter's ``reasoning``
    # object, and the reasoning text replayed in the field it arrived in.
    body.pop("reasoning", None)
    for message in body["messages"]:
        message.pop("reasoning_content", None)
    assert problems(body, CompletionCreateParamsStreaming) == []


@pytest.mark.parametrize("options", OPTIONS)
def test_responses_body_is_a_valid_response_create_params(options: dict[str, Any]) -> None:
    from openai.types.responses.response_create_params import (
        ResponseCreateParamsStreaming,
    )
    from pi_plugins.openai_responses.convert import build_body

    m = model("openai-responses", "gpt-5")
    body = build_body(m, history(m), StreamOptions(**options))
    assert problems(body, ResponseCreateParamsStreaming) == []


def test_the_oracle_catches_a_wrong_body() -> None:
    from anthropic.types.message_create_params import MessageCreateParamsStreaming

    body = {"model": "m", "max_tokens": "many", "stream": True, "bogus": 1,
            "messages": [{"role": "user", "content": [{"type": "txt", "text": "x"}]}]}
    found = problems(body, MessageCreateParamsStreaming)
    assert any(p.startswith("$.bogus") for p in found) and any(p.startswith("$.max_tokens") for p in found)
    assert any(p.startswith("$.messages[0].content") for p in found)
