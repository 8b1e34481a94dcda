"""build_session_context: messages, thinking level and model along a path (docs/sessions.md#building-the-context)."""

from __future__ import annotations

from session_builders import branch_summary, compaction, msg

from pi_core.sessions import build_session_context
from pi_core.sessions.messages import convert_to_llm


def test_empty_entries_give_empty_context() -> None:
    ctx = build_session_context([])
    assert ctx.messages == [] and ctx.thinking_level == "off" and ctx.model is None


def test_null_leaf_gives_empty_context() -> None:
    assert build_session_context([msg("1", None, "user", "hi")], None).messages == []


def test_single_user_message_and_alternation() -> None:
    assert [m["role"] for m in build_session_context([msg("1", None, "user", "hello")]).messages] == ["user"]
    entries = [msg("1", None, "user", "a"), msg("2", "1", "assistant", "b"), msg("3", "2", "user", "c"),
               msg("4", "3", "assistant", "d")]
    assert [m["role"] for m in build_session_context(entries).messages] == ["user", "assistant", "user", "assistant"]


def test_thinking_level_and_model_follow_the_path() -> None:
    entries = [
        msg("1", None, "user", "a"),
        {"type": "thinking_level_change", "id": "2", "parentId": "1", "timestamp": "t", "thinkingLevel": "high"},
        msg("3", "2", "assistant", "b"),
        {"type": "model_change", "id": "4", "parentId": "3", "timestamp": "t", "provider": "openai", "modelId": "gpt"},
    ]
    ctx = build_session_context(entries)
    assert ctx.thinking_level == "high"
    assert ctx.model == {"provider": "openai", "modelId": "gpt"}
    # an assistant message after the model change wins again
    entries.append(msg("5", "4", "assistant", "c"))
    assert build_session_context(entries).model == {"provider": "anthropic", "modelId": "claude-test"}


def test_compaction_keeps_summary_then_first_kept_onwards() -> None:
    entries = [
        msg("1", None, "user", "u1"), msg("2", "1", "assistant", "a1"), msg("3", "2", "user", "u2"),
        msg("4", "3", "assistant", "a2"), compaction("5", "4", "Summary", "3"), msg("6", "5", "user", "u3"),
        msg("7", "6", "assistant", "a3"),
    ]
    messages = build_session_context(entries).messages
    assert [m["role"] for m in messages] == ["compactionSummary", "user", "assistant", "user", "assistant"]
    assert messages[0]["summary"] == "Summary" and messages[0]["tokensBefore"] == 1000
    assert messages[1]["content"] == "u2"


def test_compaction_keeping_from_first_keeps_everything() -> None:
    entries = [msg("1", None, "user", "a"), msg("2", "1", "assistant", "b"), compaction("3", "2", "Empty summary", "1"),
               msg("4", "3", "user", "c")]
    messages = build_session_context(entries).messages
    assert len(messages) == 4 and "Empty summary" in messages[0]["summary"]


def test_latest_of_two_compactions_wins() -> None:
    entries = [
        msg("1", None, "user", "a"), msg("2", "1", "assistant", "b"), compaction("3", "2", "First summary", "1"),
        msg("4", "3", "user", "c"), msg("5", "4", "assistant", "d"), compaction("6", "5", "Second summary", "4"),
        msg("7", "6", "user", "e"),
    ]
    messages = build_session_context(entries).messages
    assert len(messages) == 4 and messages[0]["summary"] == "Second summary"


def test_branches_follow_the_requested_leaf() -> None:
    entries = [msg("1", None, "user", "start"), msg("2", "1", "assistant", "response"),
               msg("3", "2", "user", "branch A"), msg("4", "2", "user", "branch B")]
    assert build_session_context(entries, "3").messages[-1]["content"] == "branch A"
    assert build_session_context(entries, "4").messages[-1]["content"] == "branch B"


def test_branch_summary_appears_at_its_position() -> None:
    entries = [msg("1", None, "user", "start"), msg("2", "1", "assistant", "response"),
               msg("3", "2", "user", "abandoned path"), branch_summary("4", "2", "Summary of abandoned work", "3"),
               msg("5", "4", "user", "new direction")]
    messages = build_session_context(entries, "5").messages
    assert len(messages) == 4
    assert messages[2]["role"] == "branchSummary" and messages[2]["summary"] == "Summary of abandoned work"


def test_complex_tree_with_compaction_and_branch_summary() -> None:
    entries = [
        msg("1", None, "user", "start"), msg("2", "1", "assistant", "r1"), msg("3", "2", "user", "q2"),
        msg("4", "3", "assistant", "r2"), compaction("5", "4", "Compacted history", "3"),
        msg("6", "5", "user", "q3"), msg("7", "6", "assistant", "r3"),
        msg("8", "3", "user", "wrong path"), msg("9", "8", "assistant", "wrong response"),
        branch_summary("10", "3", "Tried wrong approach", "9"), msg("11", "10", "user", "better approach"),
    ]
    main = build_session_context(entries, "7").messages
    assert main[0]["summary"] == "Compacted history"
    assert [m.get("content") for m in main[1:2]] == ["q2"]
    assert main[2]["content"][0]["text"] == "r2" and main[3]["content"] == "q3" and main[4]["content"][0]["text"] == "r3"
    branch = build_session_context(entries, "11").messages
    assert branch[0]["content"] == "start" and branch[2]["content"] == "q2"
    assert branch[3]["summary"] == "Tried wrong approach" and branch[4]["content"] == "better approach"


def test_unknown_leaf_uses_last_entry_and_orphan_stands_alone() -> None:
    entries = [msg("1", None, "user", "hello"), msg("2", "1", "assistant", "hi")]
    assert len(build_session_context(entries, "nonexistent").messages) == 2
    orphaned = [msg("1", None, "user", "hello"), msg("2", "missing", "assistant", "orphan")]
    assert len(build_session_context(orphaned, "2").messages) == 1


def test_a_tool_result_whose_call_is_missing_is_dropped() -> None:
    call = {"type": "toolCall", "id": "call-1", "name": "read", "arguments": {}}
    lost = {"type": "toolCall", "id": "call-2", "name": "read", "arguments": {}}
    entries = [msg("1", None, "user", "first"),
               {"type": "message", "id": "2", "parentId": "1", "timestamp": "t",
                "message": {"role": "assistant", "content": [call], "timestamp": 1}},
               {"type": "message", "id": "3", "parentId": "2", "timestamp": "t",
                "message": {"role": "toolResult", "toolCallId": "call-1", "toolName": "read",
                            "content": [{"type": "text", "text": "kept"}], "isError": False, "timestamp": 1}},
               {"type": "message", "id": "4", "parentId": "3", "timestamp": "t",
                "message": {"role": "toolResult", "toolCallId": lost["id"], "toolName": "read",
                            "content": [{"type": "text", "text": "lost"}], "isError": False, "timestamp": 1}}]
    messages = build_session_context(entries).messages
    assert [m["role"] for m in messages] == ["user", "assistant", "toolResult"]
    assert messages[-1]["toolCallId"] == "call-1"
    # a result whose call is gone may not open the context either
    assert [m["role"] for m in build_session_context(entries[2:]).messages] == []


def test_custom_message_entry_and_unknown_types() -> None:
    entries = [
        msg("1", None, "user", "a"),
        {"type": "custom_message", "customType": "ext", "content": "Injected", "display": True,
         "id": "2", "parentId": "1", "timestamp": "2025-01-01T00:00:01.000Z"},
        {"type": "future_thing", "id": "3", "parentId": "2", "timestamp": "t"},
        {"type": "label", "id": "4", "parentId": "3", "timestamp": "t", "targetId": "1", "label": "x"},
    ]
    messages = build_session_context(entries).messages
    assert [m["role"] for m in messages] == ["user", "custom"]
    assert messages[1]["timestamp"] == 1735689601000
    assert convert_to_llm(messages)[1] == {"role": "user", "content": [{"type": "text", "text": "Injected"}],
                                           "timestamp": 1735689601000}


def test_convert_to_llm_texts() -> None:
    bash = {"role": "bashExecution", "command": "ls", "output": "a\n", "exitCode": 2, "cancelled": False,
            "truncated": True, "fullOutputPath": "/tmp/out", "timestamp": 5}
    hidden = {**bash, "excludeFromContext": True}
    empty = {"role": "bashExecution", "command": "true", "output": "", "exitCode": 0, "cancelled": True,
             "truncated": False, "timestamp": 5}
    summaries = [{"role": "compactionSummary", "summary": "S", "tokensBefore": 1, "timestamp": 1},
                 {"role": "branchSummary", "summary": "B", "fromId": "x", "timestamp": 1}]
    out = convert_to_llm([bash, hidden, empty, *summaries, {"role": "notification", "timestamp": 1}])
    texts = [m["content"][0]["text"] for m in out]
    assert texts == [
        "Ran `ls`\n```\na\n\n```\n\nCommand exited with code 2\n\n[Output truncated. Full output: /tmp/out]",
        "Ran `true`\n(no output)\n\n(command cancelled)",
        "The conversation history before this point was compacted into the following summary:\n\n<summary>\nS\n</summary>",
        "The following is a summary of a branch that this conversation came back from:\n\n<summary>\nB</summary>",
    ]


def test_block_images_replaces_and_collapses() -> None:
    image = {"type": "image", "data": "AAAA", "mimeType": "image/png"}
    message = {"role": "user", "content": [image, image, {"type": "text", "text": "t"}], "timestamp": 1}
    out = convert_to_llm([message], block_images=True)[0]["content"]
    assert out == [{"type": "text", "text": "Image reading is disabled."}, {"type": "text", "text": "t"}]
    assert convert_to_llm([message])[0]["content"][0] == image


def test_parent_cycles_end_the_path() -> None:
    entries = [msg("a", "b", "user", "one"), msg("b", "a", "assistant", "two"), msg("s", "s", "user", "self")]
    assert next(m.get("content") for m in build_session_context(entries, "b").messages) == "one"
    assert len(build_session_context(entries, "b").messages) == 2
    assert len(build_session_context(entries, "s").messages) == 1
