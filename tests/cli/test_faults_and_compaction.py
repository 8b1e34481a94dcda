"""Provider faults, auto-retry and compaction through the real ``pi`` command and the fake server."""

from __future__ import annotations

import json

from pi_core.testing.fake_server import Reply

from .conftest import PiRunner

FAST_RETRY = 'retry = { enabled = true, maxRetries = 2, baseDelayMs = 20, provider = { maxRetries = 0 } }\n'


def settings(pi: PiRunner, text: str) -> None:
    (pi.home / "settings.toml").write_text(text)


def test_rate_limit_with_retry_after_then_answer(pi_anthropic: PiRunner) -> None:
    pi_anthropic.server.add(Reply.rate_limited(retry_after=0.1), Reply(text="after the wait"))
    result = pi_anthropic.run("-p", "hi")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "after the wait\n"
    assert len(pi_anthropic.server.requests) == 2


def test_server_errors_retried_by_agent_then_clear_failure(pi: PiRunner) -> None:
    settings(pi, FAST_RETRY)
    pi.server.add(*[Reply.http_error(500, "upstream exploded") for _ in range(3)])
    result = pi.run("--mode", "json", "hi")
    events = [json.loads(line) for line in result.stdout.splitlines()]
    kinds = [e["type"] for e in events]
    assert kinds.count("auto_retry_start") == 2
    end = [e for e in events if e["type"] == "auto_retry_end"][-1]
    assert end["success"] is False and "upstream exploded" in end["finalError"]
    assert len(pi.server.requests) == 3


def test_agent_retry_recovers(pi_anthropic: PiRunner) -> None:
    settings(pi_anthropic, FAST_RETRY)
    pi_anthropic.server.add(Reply.overloaded(), Reply(text="recovered"))
    result = pi_anthropic.run("-p", "hi")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "recovered\n"
    # the failed attempt stays in the session file; the retried request does not carry it
    retried = pi_anthropic.server.requests[-1].body["messages"]
    assert [m["role"] for m in retried] == ["user"]


def test_print_mode_error_is_one_line_and_session_stays_loadable(pi_anthropic: PiRunner) -> None:
    settings(pi_anthropic, FAST_RETRY.replace("maxRetries = 2,", "maxRetries = 0,"))
    pi_anthropic.server.add(Reply(text="first answer"), Reply.http_error(503, "service unavailable right now"))
    assert pi_anthropic.run("-p", "one").returncode == 0
    result = pi_anthropic.run("-c", "-p", "two")
    assert result.returncode == 1
    assert result.stdout == ""
    assert len(result.stderr.strip().splitlines()) == 1 and "service unavailable" in result.stderr
    pi_anthropic.server.add(Reply(text="third"))
    result = pi_anthropic.run("-c", "-p", "three")
    assert result.returncode == 0 and result.stdout == "third\n"
    roles = [m["role"] for m in pi_anthropic.server.requests[-1].body["messages"]]
    assert roles == ["user", "assistant", "user", "user"]  # the failed reply is dropped, both prompts kept


def test_threshold_compaction_puts_summary_in_next_request(pi_anthropic: PiRunner) -> None:
    settings(pi_anthropic, "compaction = { enabled = true, reserveTokens = 20000, keepRecentTokens = 10 }\n")
    server = pi_anthropic.server
    server.add(Reply(text="a long answer " * 20, input_tokens=90000),  # over 100000 - 20000: compact
               Reply(text="## Goal\nSUMMARY OF EARLIER WORK"),  # the summarisation request
               Reply(text="second answer"))
    result = pi_anthropic.run("-p", "first question", "second question")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "second answer\n"
    assert len(server.requests) == 3
    summary_request = json.dumps(server.requests[1].body)
    assert "first question" in summary_request
    final = json.dumps(server.requests[2].body["messages"])
    assert "SUMMARY OF EARLIER WORK" in final
    assert "first question" not in final
    files = list((pi_anthropic.home / "sessions").rglob("*.jsonl"))
    entries = [json.loads(line) for line in files[0].read_text().splitlines()]
    assert any(e["type"] == "compaction" for e in entries)
