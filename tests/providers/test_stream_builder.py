from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from pi_core.errors import ProviderError
from pi_core.llm import complete, stream_simple
from pi_core.llm.stream import MessageBuilder, failure_info, sanitize_surrogates
from pi_core.providers import StreamOptions
from pi_core.testing.streams import assert_protocol, collect, final, types
from pi_core.types import AssistantMessageEvent, Context, Model, ModelCost, UserMessage

MODEL = Model(id="m", api="fake-api", provider="fake", cost=ModelCost(input=3, output=15))


def test_builder_emits_ordered_events_on_one_mutable_message() -> None:
    b = MessageBuilder(MODEL)
    events = [b.start()]
    events.append(b.thinking_start())
    events.append(b.thinking_delta(0, "hm"))
    b.add_thinking_signature(0, "sig")
    events.append(b.thinking_end(0))
    events.append(b.text_start())
    events.append(b.text_delta(1, "Hi"))
    events.append(b.text_end(1))
    events.append(b.toolcall_start("call_1", "read"))
    events.append(b.toolcall_delta(2, '{"path": "sr'))
    assert b.message.content[2].arguments == {"path": "sr"}  # type: ignore[union-attr]
    events.append(b.toolcall_delta(2, 'c/a.py"}'))
    events.append(b.toolcall_end(2))
    b.set_usage(input=1_000_000, output=1_000)
    events.append(b.done("toolUse"))
    assert_protocol(events)
    message = final(events)
    assert message.to_json()["content"] == [
        {"type": "thinking", "thinking": "hm", "thinkingSignature": "sig"},
        {"type": "text", "text": "Hi"},
        {"type": "toolCall", "id": "call_1", "name": "read", "arguments": {"path": "src/a.py"}}]
    assert events[-2].tool_call is message.content[2]
    assert events[3].content == "hm" and events[6].content == "Hi"
    assert message.usage.total_tokens == 1_001_000
    assert message.usage.cost.total == pytest.approx(3.015)
    assert message.stop_reason == "toolUse"


def test_usage_updates_only_given_fields() -> None:
    b = MessageBuilder(MODEL)
    b.set_usage(input=10, output=1, cache_read=5)
    b.set_usage(output=7)
    assert (b.message.usage.input, b.message.usage.output, b.message.usage.cache_read) == (10, 7, 5)
    assert b.message.usage.total_tokens == 22


def test_a_second_block_cannot_start_while_one_is_open() -> None:
    b = MessageBuilder(MODEL)
    b.text_start()
    with pytest.raises(RuntimeError, match="block 0 is still open"):
        b.thinking_start()


def test_error_keeps_partial_content_and_records_failure_info() -> None:
    b = MessageBuilder(MODEL)
    b.start()
    b.text_start()
    b.text_delta(0, "par")
    event = b.error(ProviderError("529 overloaded", status=529, retryable=True, retry_after=2.0))
    assert event.type == "error" and event.reason == "error"
    assert event.error is not None and event.error.text() == "par"
    assert event.error.error_message == "529 overloaded"
    info = failure_info(event.error)
    assert info is not None and (info.status, info.retryable, info.retry_after) == (529, True, 2.0)
    assert "failure" not in str(event.error.to_json())


def test_aborted_error_uses_pis_text() -> None:
    event = MessageBuilder(MODEL).error(None, aborted=True)
    assert event.reason == "aborted" and event.error is not None
    assert event.error.error_message == "Request was aborted"


def test_non_exception_errors_are_shown_as_json() -> None:
    event = MessageBuilder(MODEL).error({"code": 7})
    assert event.error is not None and event.error.error_message == '{"code": 7}'


def test_sanitize_surrogates_drops_only_lone_halves() -> None:
    assert sanitize_surrogates("a\ud83d b \ud83d\ude00 c\ude00") == "a b \U0001f600 c"
    assert sanitize_surrogates("plain") == "plain"


class ScriptedProvider:
    api = "fake-api"

    def __init__(self, fail: BaseException | None = None) -> None:
        self.fail = fail
        self.seen: list[StreamOptions] = []

    async def stream(self, model: Model, context: Context, options: StreamOptions) -> AsyncIterator[AssistantMessageEvent]:
        self.seen.append(options)
        b = MessageBuilder(model)
        yield b.start()
        if self.fail is not None:
            raise self.fail
        ev = b.text_start()
        yield ev
        yield b.text_delta(0, "ok")
        yield b.text_end(0)
        yield b.done("stop")


def test_stream_simple_turns_a_raising_plugin_into_an_error_event() -> None:
    events = collect(stream_simple(ScriptedProvider(RuntimeError("plugin bug")), MODEL, Context(), StreamOptions()))
    assert types(events) == ["start", "error"]
    assert final(events).error_message == "plugin bug"


def test_stream_simple_rejects_a_mismatched_api() -> None:
    other = MODEL.model_copy(update={"api": "other"})
    message = asyncio.run(complete(ScriptedProvider(), other, Context(), StreamOptions()))
    assert message.stop_reason == "error"
    assert message.error_message == "Mismatched api: other expected fake-api"


def test_stream_simple_clamps_reasoning_and_fills_env_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "env-key")
    monkeypatch.delenv("ANTHROPIC_OAUTH_TOKEN", raising=False)
    provider = ScriptedProvider()
    reasoning = MODEL.model_copy(update={"reasoning": True, "provider": "anthropic"})
    message = asyncio.run(complete(provider, reasoning, Context(messages=[UserMessage(content="hi")]),
                                   StreamOptions(reasoning="xhigh")))
    assert message.text() == "ok"
    assert provider.seen[0].reasoning == "high"
    assert provider.seen[0].api_key == "env-key"
    plain = MODEL.model_copy(update={"provider": "anthropic"})
    asyncio.run(complete(provider, plain, Context(), StreamOptions(reasoning="high", api_key="given")))
    assert provider.seen[1].reasoning is None and provider.seen[1].api_key == "given"
