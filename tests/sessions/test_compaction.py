"""Compaction: token accounting, cut points, summaries, applying, hooks and triggers (docs/sessions.md#compaction)."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import pytest
from session_builders import FIXTURES, assistant, tool_call, tool_result, user

from pi_core.compaction.compactor import (
    OVERFLOW_GAVE_UP,
    CompactionCancelled,
    Compactor,
)
from pi_core.compaction.plan import (
    CompactionResult,
    CompactionSettings,
    find_cut_point,
    prepare_compaction,
)
from pi_core.compaction.summarize import serialize_conversation
from pi_core.compaction.tokens import (
    calculate_context_tokens,
    estimate_context_tokens,
    estimate_tokens,
    last_assistant_usage,
    should_compact,
)
from pi_core.sessions import SessionManager
from pi_core.sessions.errors import SessionError
from pi_core.types import AssistantMessage, Model, TextContent


class FakeSummarizer:
    """Records each request and answers with a fixed text (or an error reply)."""

    def __init__(self, text: str = "## Goal\nFake summary", error: str | None = None) -> None:
        self.text, self.error = text, error
        self.calls: list[tuple[Any, Any, Any]] = []

    async def __call__(self, model: Model, context: Any, options: Any) -> AssistantMessage:
        self.calls.append((model, context, options))
        if self.error:
            return AssistantMessage(stop_reason="error", error_message=self.error)
        prompt = context.messages[0].content[0].text
        text = "PREFIX SUMMARY" if "## Original Request" in prompt else self.text
        return AssistantMessage(content=[TextContent(text=text)])

    def prompt(self, index: int = 0) -> str:
        return self.calls[index][1].messages[0].content[0].text


MODEL = Model(id="claude-test", api="anthropic-messages", provider="anthropic", context_window=100_000)
REASONING_MODEL = Model(id="r1", api="anthropic-messages", provider="anthropic", reasoning=True)


def entry(message: dict[str, Any], entry_id: str = "") -> dict[str, Any]:
    return {"type": "message", "id": entry_id or f"e{id(message) % 10**8:08d}", "parentId": None,
            "timestamp": "2025-01-01T00:00:00.000Z", "message": message}


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def test_token_accounting() -> None:
    usage = {"input": 1000, "output": 500, "cacheRead": 200, "cacheWrite": 100, "totalTokens": 1800}
    assert calculate_context_tokens(usage) == 1800
    assert calculate_context_tokens({**usage, "totalTokens": 0}) == 1800
    assert should_compact(95000, 100000, True, 10000) is True
    assert should_compact(89000, 100000, True, 10000) is False
    assert should_compact(95000, 100000, False, 10000) is False
    assert estimate_tokens(user("x" * 9)) == 3
    calls = assistant("abcd", tool_calls=[tool_call("c", "read", path="a")])
    assert estimate_tokens(calls) == 5  # 4 + len("read") + len('{"path":"a"}') = 20 chars
    image_result = {"role": "toolResult", "content": [{"type": "image", "data": "", "mimeType": "image/png"}]}
    assert estimate_tokens(image_result) == 1200


def test_last_usage_skips_aborted_and_errors() -> None:
    good = assistant("a")
    good["usage"]["input"] = 200
    aborted = assistant("b", stop="aborted")
    entries = [entry(good, "a"), entry(aborted, "b"), entry(assistant("c", stop="error"), "c")]
    assert last_assistant_usage(entries)["input"] == 200
    assert last_assistant_usage([entry(user("x"))]) is None
    estimate = estimate_context_tokens([user("x" * 40), good, user("y" * 8)])
    assert (estimate.tokens, estimate.last_usage_index) == (2 + 2, 1)
    assert estimate_context_tokens([user("x" * 40)]).last_usage_index is None


def test_cut_point_basics() -> None:
    single = [entry(assistant("a"), "only")]
    assert find_cut_point(single, 0, 1, 1000).first_kept_entry_index == 0
    small = [entry(user("1"), "1"), entry(assistant("a"), "2"), entry(user("2"), "3"), entry(assistant("b"), "4")]
    assert find_cut_point(small, 0, 4, 50000).first_kept_entry_index == 0
    many = []
    for i in range(10):
        many += [entry(user(f"User {i}" * 500), f"u{i}"), entry(assistant(f"Assistant {i}" * 500), f"a{i}")]
    cut = find_cut_point(many, 0, len(many), 2500)
    assert 0 < cut.first_kept_entry_index < len(many)
    assert many[cut.first_kept_entry_index]["message"]["role"] in ("user", "assistant")


def test_cut_never_lands_on_tool_result_and_reports_split_turn() -> None:
    entries = [
        entry(user("Turn 1"), "0"), entry(assistant("A1"), "1"), entry(user("Turn 2"), "2"),
        entry(assistant("x" * 4000, tool_calls=[tool_call("c1", "read", path="f")]), "3"),
        entry(tool_result("c1", "read", "y" * 4000), "4"),
        entry(assistant("z" * 4000), "5"),
    ]
    cut = find_cut_point(entries, 0, len(entries), 1500)
    # the budget is reached at the tool result (index 4); the next valid cut point is the assistant at 5
    assert cut.first_kept_entry_index == 5
    assert cut.is_split_turn and cut.turn_start_index == 2


def test_serialization_truncates_only_tool_results() -> None:
    long = "x" * 2500
    text = serialize_conversation([
        user(long), assistant(long, tool_calls=[tool_call("c", "bash", command="ls", n=2)]),
        tool_result("c", "bash", long),
    ])
    parts = text.split("\n\n")
    assert parts[0] == f"[User]: {long}"
    assert parts[1] == f"[Assistant]: {long}"
    assert parts[2] == '[Assistant tool calls]: bash(command="ls", n=2)'
    assert text.endswith("x" * 2000 + "\n\n[... 500 more characters truncated]")


def build_session(tmp_path: Path, turns: int = 6, chars: int = 40_000) -> SessionManager:
    sm = SessionManager.create(str(tmp_path), tmp_path / "sessions")
    sm.append_model_change("anthropic", "claude-test")
    sm.append_thinking_level_change("off")
    for i in range(turns):
        sm.append_message(user(f"question {i} " + "q" * chars, ts=1000 + i))
        sm.append_message(assistant(f"answer {i}", ts=1000 + i, tool_calls=[tool_call(f"c{i}", "read", path=f"src/f{i}.py")]))
        sm.append_message(tool_result(f"c{i}", "read", "content " * 10, ts=1000 + i))
        sm.append_message(assistant(f"done {i}", ts=1000 + i,
                                    tool_calls=[tool_call(f"w{i}", "edit", path=f"src/f{i}.py")] if i == 0 else None))
    return sm


def test_manual_compaction_stores_summary_and_context_uses_it(tmp_path: Path) -> None:
    sm = build_session(tmp_path)
    events: list[Any] = []
    fake = FakeSummarizer()
    compactor = Compactor(sm, fake, emit=events.append)
    before = sm.build_session_context().messages
    outcome = run(compactor.compact(MODEL, custom_instructions="focus on tests"))

    compaction = sm.leaf_entry()
    assert compaction["type"] == "compaction" and compaction["fromHook"] is False
    assert compaction["summary"].startswith("## Goal\nFake summary")
    # turns 4 and 5 (2 x 10,000 estimated tokens) fill keepRecentTokens; f0 was read and then edited
    assert compaction["details"] == {"readFiles": ["src/f1.py", "src/f2.py", "src/f3.py"], "modifiedFiles": ["src/f0.py"]}
    assert sm.get_entry(compaction["firstKeptEntryId"])["message"]["content"].startswith("question 4 ")
    assert "<modified-files>\nsrc/f0.py\n</modified-files>" in compaction["summary"]
    ctx = sm.build_session_context().messages
    assert ctx[0]["role"] == "compactionSummary" and ctx[0]["summary"] == compaction["summary"]
    assert len(ctx) < len(before)
    kept = sm.get_entry(compaction["firstKeptEntryId"])
    assert ctx[1] == kept["message"] and ctx[-1] == before[-1]
    assert all(m.get("content") != before[0].get("content") for m in ctx)  # the first question is gone

    prompt = fake.prompt()
    assert prompt.startswith("<conversation>\n[User]: question 0")
    assert "## Critical Context" in prompt and prompt.endswith("Additional focus: focus on tests")
    assert fake.calls[0][2].max_tokens == int(0.8 * 16384) and fake.calls[0][2].reasoning is None
    assert [e.type for e in events] == ["compaction_start", "compaction_end"]
    end = events[1].to_json()
    assert end["reason"] == "manual" and end["result"]["firstKeptEntryId"] == outcome.result.first_kept_entry_id
    assert end["aborted"] is False and end["willRetry"] is False and "errorMessage" not in end

    with pytest.raises(SessionError, match="Already compacted"):
        run(compactor.compact(MODEL))
    # a second compaction sends the previous summary for an update
    sm.append_message(user("next " + "n" * 100_000, ts=5000))
    sm.append_message(assistant("ok", ts=5000))
    run(compactor.compact(MODEL))
    assert "<previous-summary>\n" + compaction["summary"] + "\n</previous-summary>" in fake.prompt(1)
    assert len([m for m in sm.build_session_context().messages if m["role"] == "compactionSummary"]) == 1


def test_split_turn_summarises_prefix_in_parallel(tmp_path: Path) -> None:
    sm = SessionManager.in_memory(str(tmp_path))
    sm.append_message(user("only turn"))
    for i in range(6):
        sm.append_message(assistant("w" * 20_000, tool_calls=[tool_call(f"c{i}", "bash", command="ls")]))
        sm.append_message(tool_result(f"c{i}", "bash", "out"))
    fake = FakeSummarizer()
    run(Compactor(sm, fake).compact(MODEL))
    summary = sm.leaf_entry()["summary"]
    assert summary == "No prior history.\n\n---\n\n**Turn Context (split turn):**\n\nPREFIX SUMMARY"
    assert len(fake.calls) == 1 and fake.calls[0][2].max_tokens == int(0.5 * 16384)


def test_nothing_to_compact_and_failures(tmp_path: Path) -> None:
    empty = SessionManager.in_memory(str(tmp_path))
    events: list[Any] = []
    with pytest.raises(SessionError, match=r"Nothing to compact \(session too small\)"):
        run(Compactor(empty, FakeSummarizer(), emit=events.append).compact(MODEL))
    assert events[-1].to_json()["errorMessage"] == "Compaction failed: Nothing to compact (session too small)"
    sm = build_session(tmp_path)
    with pytest.raises(SessionError, match="Summarization failed: boom"):
        run(Compactor(sm, FakeSummarizer(error="boom")).compact(MODEL))
    assert sm.leaf_entry()["type"] != "compaction"


def test_reasoning_follows_thinking_level_only_for_reasoning_models(tmp_path: Path) -> None:
    for model, level, expected in [(REASONING_MODEL, "high", "high"), (REASONING_MODEL, "off", None),
                                   (MODEL, "high", None)]:
        fake = FakeSummarizer()
        run(Compactor(build_session(tmp_path / str(len(str(expected))) / level), fake).compact(model, thinking_level=level))
        assert fake.calls[0][2].reasoning == expected


def test_hook_result_is_stored_verbatim(tmp_path: Path) -> None:
    sm = build_session(tmp_path)
    seen: dict[str, Any] = {}

    def hook(preparation: Any, branch_entries: Any, custom_instructions: Any, signal: Any) -> CompactionResult:
        seen["prep"] = preparation
        return CompactionResult("custom summary", preparation.first_kept_entry_id, 42, {"mine": True})

    fake = FakeSummarizer()
    outcome = run(Compactor(sm, fake, hook=hook).compact(MODEL))
    stored = sm.leaf_entry()
    assert (stored["summary"], stored["tokensBefore"], stored["details"], stored["fromHook"]) == (
        "custom summary", 42, {"mine": True}, True)
    assert outcome.from_hook and fake.calls == [] and seen["prep"].messages_to_summarize


def test_preparation_hands_plugins_typed_messages_that_summarise_as_the_dicts_did(tmp_path: Path) -> None:
    from pi_core.compaction.plan import _messages
    from pi_core.sessions.messages import convert_to_llm
    from pi_core.types import CustomMessage, ToolResultMessage, UserMessage

    sm = build_session(tmp_path)
    sm.append_message({"role": "bashExecution", "command": "ls", "output": "a.py", "exitCode": 0,
                       "cancelled": False, "truncated": False, "timestamp": 2000})
    for i in range(3):  # enough kept after it that the shell command is summarised
        sm.append_message(user(f"later {i} " + "l" * 40_000, ts=2001 + i))
    path = sm.get_branch()
    preparation = prepare_compaction(path, CompactionSettings())
    assert preparation is not None
    typed = preparation.messages_to_summarize
    assert {type(m) for m in typed} == {UserMessage, AssistantMessage, ToolResultMessage, CustomMessage}
    assert typed[0].role == "user" and typed[0].content.startswith("question 0 ")
    bash = next(m for m in typed if m.role == "bashExecution")
    assert isinstance(bash, CustomMessage) and bash.to_json()["command"] == "ls"
    end = next(i for i, e in enumerate(path) if e["id"] == preparation.first_kept_entry_id)
    dicts = _messages(path, 0, end)
    assert len(dicts) == len(typed)
    assert serialize_conversation(convert_to_llm(typed)) == serialize_conversation(convert_to_llm(dicts))


def test_throwing_hook_falls_back_and_cancel_aborts(tmp_path: Path) -> None:
    sm = build_session(tmp_path)
    errors: list[BaseException] = []

    def broken(**_: Any) -> None:
        raise RuntimeError("plugin bug")

    run(Compactor(sm, FakeSummarizer(), hook=broken, on_hook_error=errors.append).compact(MODEL))
    assert sm.leaf_entry()["fromHook"] is False and str(errors[0]) == "plugin bug"

    other = build_session(tmp_path / "b")

    def cancel(**_: Any) -> None:
        raise CompactionCancelled()

    events: list[Any] = []
    with pytest.raises(CompactionCancelled, match="Compaction cancelled"):
        run(Compactor(other, FakeSummarizer(), hook=cancel, emit=events.append).compact(MODEL))
    assert events[-1].to_json() == {"type": "compaction_end", "reason": "manual", "aborted": True, "willRetry": False}


def test_pluggy_hookspec_registers_and_supplies_result(tmp_path: Path) -> None:
    import pluggy

    import pi_core.hookspecs as specs
    from pi_core.hookspecs import hookimpl

    pm = pluggy.PluginManager("pi")
    pm.add_hookspecs(specs)

    class Plugin:
        @hookimpl
        def pi_session_compact(self, preparation: Any, branch_entries: Any, custom_instructions: Any,
                               signal: Any) -> CompactionResult:
            return CompactionResult("from plugin", preparation.first_kept_entry_id, 7)

    pm.register(Plugin())
    sm = build_session(tmp_path)
    run(Compactor(sm, FakeSummarizer(), hook=pm.hook.pi_session_compact).compact(MODEL))
    assert sm.leaf_entry()["summary"] == "from plugin" and sm.leaf_entry()["fromHook"] is True


def _agent_messages(sm: SessionManager) -> list[dict[str, Any]]:
    return sm.build_session_context().messages


def test_threshold_compaction_and_stale_usage(tmp_path: Path) -> None:
    sm = build_session(tmp_path)
    events: list[Any] = []
    compactor = Compactor(sm, FakeSummarizer(), emit=events.append,
                          settings=CompactionSettings(reserve_tokens=10_000))
    big = assistant("reply", ts=1_500_000_000_000, usage_total=95_000)  # older than the compaction made below
    sm.append_message(big)
    assert compactor.auto_reason(big, MODEL, _agent_messages(sm)) == "threshold"
    outcome = run(compactor.check(big, MODEL, _agent_messages(sm)))
    assert outcome is not None and not outcome.will_retry
    assert events[-1].to_json()["reason"] == "threshold" and "result" in events[-1].to_json()
    # the same (pre-compaction) usage never triggers again
    assert compactor.auto_reason(big, MODEL, _agent_messages(sm)) is None
    small = assistant("fine", ts=4_000_000_000_000, usage_total=10)
    assert compactor.auto_reason(small, MODEL, _agent_messages(sm)) is None
    disabled = Compactor(sm, FakeSummarizer(), settings=CompactionSettings(enabled=False))
    huge = assistant("x", ts=4_000_000_000_000, usage_total=99_999)
    assert disabled.auto_reason(huge, MODEL, _agent_messages(sm)) is None


def test_error_reply_uses_last_successful_usage(tmp_path: Path) -> None:
    sm = SessionManager.in_memory(str(tmp_path))
    sm.append_message(user("q", ts=10))
    compactor = Compactor(sm, FakeSummarizer(), settings=CompactionSettings(reserve_tokens=10_000))
    failed = assistant("", ts=20, stop="error", error="529 overloaded")
    assert compactor.auto_reason(failed, MODEL, [user("q"), failed]) is None  # no usage at all
    good = assistant("a", ts=15, usage_total=95_000)
    assert compactor.auto_reason(failed, MODEL, [user("q"), good, failed]) == "threshold"


def test_overflow_recovers_once_per_user_message(tmp_path: Path) -> None:
    sm = build_session(tmp_path)
    events: list[Any] = []
    compactor = Compactor(sm, FakeSummarizer(), emit=events.append)
    overflow = assistant("", ts=3_000_000_000_000, stop="error", error="prompt is too long: 213462 tokens > 200000 maximum")
    sm.append_message(overflow)
    outcome = run(compactor.check(overflow, MODEL, _agent_messages(sm)))
    assert outcome is not None and outcome.will_retry
    assert events[0].to_json() == {"type": "compaction_start", "reason": "overflow"}
    assert events[-1].to_json()["willRetry"] is True
    again = assistant("", ts=4_000_000_000_000, stop="error", error="prompt is too long: 213462 tokens > 200000 maximum")
    assert run(compactor.check(again, MODEL, _agent_messages(sm))) is None
    assert events[-1].to_json() == {"type": "compaction_end", "reason": "overflow", "aborted": False,
                                    "willRetry": False, "errorMessage": OVERFLOW_GAVE_UP}
    compactor.reset_overflow_guard()
    assert compactor.auto_reason(again, MODEL, _agent_messages(sm)) == "overflow"
    other_model = assistant("", ts=4_000_000_000_000, stop="error", model="other",
                            error="prompt is too long: 213462 tokens > 200000 maximum")
    assert Compactor(sm, FakeSummarizer()).auto_reason(other_model, MODEL, []) is None


def test_auto_failure_is_reported_not_raised(tmp_path: Path) -> None:
    sm = build_session(tmp_path)
    events: list[Any] = []
    compactor = Compactor(sm, FakeSummarizer(error="down"), emit=events.append)
    assert run(compactor.run_auto(MODEL, "threshold")) is None
    assert events[-1].to_json()["errorMessage"] == "Auto-compaction failed: Summarization failed: down"
    assert run(compactor.run_auto(MODEL, "overflow")) is None
    assert events[-1].to_json()["errorMessage"] == "Context overflow recovery failed: Summarization failed: down"


def test_large_pi_fixture_compacts(tmp_path: Path) -> None:
    path = tmp_path / "large.jsonl"
    shutil.copy(FIXTURES / "large-session.jsonl", path)
    sm = SessionManager.open(path)
    before = sm.build_session_context().messages
    preparation = prepare_compaction(sm.get_branch(), CompactionSettings())
    assert preparation is not None and preparation.tokens_before > 0
    fake = FakeSummarizer("## Goal\n" + "summary " * 30)
    run(Compactor(sm, fake).compact(MODEL))
    after = SessionManager.open(path).build_session_context().messages
    assert after[0]["role"] == "compactionSummary" and after[0]["summary"].startswith("## Goal\nsummary")
    assert len(after) < len(before) and after[-1] == before[-1]
