from __future__ import annotations

import re

from pi_core.llm.transform import transform_messages
from pi_core.types import (
    AssistantMessage,
    ImageContent,
    Model,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

COPILOT_CLAUDE = Model(id="claude-sonnet-4", api="anthropic-messages", provider="github-copilot")
IMAGE = ImageContent(data="aGk=", mime_type="image/png")


def assistant(*content: object, model: str = "gpt-4o", api: str = "openai-completions",
              provider: str = "github-copilot", stop: str = "stop") -> AssistantMessage:
    return AssistantMessage(content=list(content), api=api, provider=provider, model=model,  # type: ignore[arg-type]
                            stop_reason=stop)  # type: ignore[arg-type]


def test_thinking_from_another_model_becomes_text() -> None:
    message = assistant(ThinkingContent(thinking="Let me think about this...", thinking_signature="reasoning_content"),
                        TextContent(text="Hi there!"))
    out = transform_messages([UserMessage(content="hi"), message], COPILOT_CLAUDE)
    blocks = out[1].content  # type: ignore[union-attr]
    assert not any(isinstance(b, ThinkingContent) for b in blocks)
    assert [b.text for b in blocks if isinstance(b, TextContent)] == ["Let me think about this...", "Hi there!"]
    assert message.content[0].type == "thinking"  # the input is not mutated


def test_cross_model_tool_call_loses_thought_signature() -> None:
    call = ToolCall(id="call_1", name="read", arguments={"path": "a"}, thought_signature="sig")
    out = transform_messages([assistant(call, stop="toolUse"),
                              ToolResultMessage(tool_call_id="call_1", tool_name="read")], COPILOT_CLAUDE)
    assert out[0].content[0].thought_signature is None  # type: ignore[union-attr]
    assert call.thought_signature == "sig"


def test_same_model_keeps_everything() -> None:
    same = assistant(ThinkingContent(thinking="", thinking_signature="sig"),
                     ThinkingContent(thinking="opaque", thinking_signature="x", redacted=True),
                     TextContent(text="t", text_signature="ts"),
                     ToolCall(id="call|weird/id" + "x" * 80, name="read", thought_signature="s"),
                     model="claude-sonnet-4", api="anthropic-messages", stop="toolUse")
    out = transform_messages([same, ToolResultMessage(tool_call_id=same.content[3].id, tool_name="read")],  # type: ignore[union-attr]
                             COPILOT_CLAUDE)
    assert out[0] is same
    assert out[1].tool_call_id == same.content[3].id  # type: ignore[union-attr]


def test_other_model_drops_redacted_and_empty_thinking_and_text_signature() -> None:
    message = assistant(ThinkingContent(thinking="secret", thinking_signature="x", redacted=True),
                        ThinkingContent(thinking="  ", thinking_signature="sig"),
                        TextContent(text="t", text_signature="ts"))
    out = transform_messages([message], COPILOT_CLAUDE)
    assert [b.to_json() for b in out[0].content] == [{"type": "text", "text": "t"}]  # type: ignore[union-attr]


def test_orphaned_tool_call_gets_a_synthetic_result_before_the_next_user_message() -> None:
    messages = [UserMessage(content="go"), assistant(ToolCall(id="X", name="bash"), stop="toolUse"),
                UserMessage(content="next")]
    out = transform_messages(messages, COPILOT_CLAUDE)
    assert [m.role for m in out] == ["user", "assistant", "toolResult", "user"]
    result = out[2]
    assert isinstance(result, ToolResultMessage)
    assert (result.tool_call_id, result.tool_name, result.is_error) == ("X", "bash", True)
    assert result.text() == "No result provided"


def test_orphaned_tool_call_at_the_end_is_patched() -> None:
    calls = [ToolCall(id="A", name="read"), ToolCall(id="B", name="ls")]
    out = transform_messages([UserMessage(content="go"), assistant(*calls, stop="toolUse"),
                              ToolResultMessage(tool_call_id="A", tool_name="read")], COPILOT_CLAUDE)
    assert [(m.role, getattr(m, "tool_call_id", None)) for m in out] == [
        ("user", None), ("assistant", None), ("toolResult", "A"), ("toolResult", "B")]


def test_errored_and_aborted_turns_are_dropped() -> None:
    messages = [UserMessage(content="a"), assistant(TextContent(text="half"), stop="error"),
                assistant(TextContent(text="cut"), stop="aborted"), UserMessage(content="b")]
    out = transform_messages(messages, COPILOT_CLAUDE)
    assert [m.role for m in out] == ["user", "user"]


def test_images_become_placeholders_for_text_only_models() -> None:
    messages = [UserMessage(content=[TextContent(text="look"), IMAGE, IMAGE, TextContent(text="and"), IMAGE]),
                assistant(ToolCall(id="c", name="read"), stop="toolUse"),
                ToolResultMessage(tool_call_id="c", tool_name="read", content=[IMAGE])]
    out = transform_messages(messages, COPILOT_CLAUDE)
    assert [b.to_json() for b in out[0].content] == [  # type: ignore[union-attr]
        {"type": "text", "text": "look"}, {"type": "text", "text": "(image omitted: model does not support images)"},
        {"type": "text", "text": "and"}, {"type": "text", "text": "(image omitted: model does not support images)"}]
    assert out[2].text() == "(tool image omitted: model does not support images)"  # type: ignore[union-attr]
    vision = COPILOT_CLAUDE.model_copy(update={"input": ["text", "image"]})
    assert transform_messages(messages, vision)[0].content[1] == IMAGE  # type: ignore[union-attr]


def test_anthropic_tool_call_ids_are_sanitised_to_64_chars_and_results_follow() -> None:
    long_id = "call_abc|fc_+/=xyz" + "q" * 80
    out = transform_messages([assistant(ToolCall(id=long_id, name="read"), stop="toolUse"),
                              ToolResultMessage(tool_call_id=long_id, tool_name="read")], COPILOT_CLAUDE)
    new_id = out[0].content[0].id  # type: ignore[union-attr]
    assert re.fullmatch(r"[A-Za-z0-9_-]{1,64}", new_id)
    assert new_id.startswith("call_abc_fc____xyz")
    assert out[1].tool_call_id == new_id  # type: ignore[union-attr]


def test_responses_ids_for_openai() -> None:
    target = Model(id="gpt-5", api="openai-responses", provider="openai")
    out = transform_messages([assistant(ToolCall(id="call1|item/2", name="read"), stop="toolUse",
                                        provider="openai", model="gpt-4o", api="openai-completions"),
                              ToolResultMessage(tool_call_id="call1|item/2", tool_name="read")], target)
    assert out[0].content[0].id == "call1|fc_item_2"  # type: ignore[union-attr]
    assert out[1].tool_call_id == "call1|fc_item_2"  # type: ignore[union-attr]
    trailing = transform_messages([assistant(ToolCall(id="c__|fc_x__", name="r"), provider="x")], target)
    assert trailing[0].content[0].id == "c|fc_x"  # type: ignore[union-attr]


def test_completions_ids() -> None:
    target = Model(id="gpt-4o", api="openai-completions", provider="openai")
    out = transform_messages([assistant(ToolCall(id="call_1|fc_" + "z" * 60, name="r"), provider="anthropic",
                                        api="anthropic-messages", model="claude")], target)
    assert out[0].content[0].id == "call_1"  # type: ignore[union-attr]
    long = transform_messages([assistant(ToolCall(id="t" * 60, name="r"), provider="anthropic")], target)
    assert long[0].content[0].id == "t" * 40  # type: ignore[union-attr]
