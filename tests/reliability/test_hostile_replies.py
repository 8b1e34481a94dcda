"""Replies a model (or a models file) can send that used to end the run or brick the session (issue 17
items 1, 2, 4), through the real ``pi`` against the fake server on every wire."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from pi_core.testing.fake_server import Reply, ToolUse
from pi_core.testing.runner import PiRunner, pi_runner

from .conftest import ALL_WIRES


@pytest.fixture(params=ALL_WIRES)
def wire(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[PiRunner]:
    with pi_runner(tmp_path, request.param) as runner:
        yield runner


def strict_json(text: str) -> object:
    """Parse as JSON proper: NaN and Infinity are not JSON (Python's parser would take them)."""

    def refuse(token: str) -> None:
        raise AssertionError(f"not JSON: {token}")

    return json.loads(text, parse_constant=refuse)


def session_text(pi: PiRunner) -> str:
    (path,) = pi.session_files()
    return path.read_text(encoding="utf-8")  # strict: the file must be valid UTF-8


def test_a_lone_surrogate_in_tool_arguments_is_replaced_and_the_session_goes_on(wire: PiRunner) -> None:
    hostile = ToolUse("bash", raw_arguments='{"command": "echo A\\ud800B"}')
    wire.server.add(Reply(tool_calls=[hostile]), Reply(text="done"))
    first = wire.run("--mode", "json", "go")
    assert first.returncode == 0 and "Traceback" not in first.stderr
    events = [json.loads(line) for line in first.stdout.splitlines()]  # every line is valid JSON
    ends = [e for e in events if e.get("type") == "tool_execution_end"]
    assert ends and ends[0]["result"]["content"][0]["text"] == "A\ufffdB\n"
    (end,) = [e for e in events if e.get("type") == "agent_end"]
    assert end["messages"][-1]["stopReason"] == "stop" and "codec" not in first.stdout
    assert "\\ud800" not in session_text(wire) and "A\ufffdB" in session_text(wire)
    sent = json.dumps(wire.server.requests[1].body, ensure_ascii=False)
    assert "A\ufffdB" in sent
    wire.server.add(Reply(text="still here"))
    again = wire.run("-c", "-p", "and now?")  # the session is not bricked
    assert again.returncode == 0 and again.stdout == "still here\n", again.stderr


def test_a_completed_reply_over_the_context_window_is_compacted_and_printed(wire: PiRunner) -> None:
    wire.server.add(Reply(text="first answer"))
    assert wire.run("-p", "hello").returncode == 0
    # the models file says 100k; the reply reports 200k: a silent overflow on a reply that completed
    wire.server.add(Reply(text="the final answer", input_tokens=200_000), Reply(text="## Goal\nsummary"))
    result = wire.run("-c", "-p", "go")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "the final answer\n"
    assert "Traceback" not in result.stderr and "Cannot continue" not in result.stderr
    assert len(wire.server.requests) == 3  # answer, then the summary; no re-run of the finished prompt
    entries = [json.loads(line) for line in session_text(wire).splitlines()]
    assert [e["type"] for e in entries].count("compaction") == 1
    wire.server.add(Reply(text="after compaction"))
    assert wire.run("-c", "-p", "more").stdout == "after compaction\n"


def test_nan_and_infinity_arguments_are_rejected_with_a_clear_error(wire: PiRunner) -> None:
    (wire.cwd / "a.txt").write_text("one\ntwo\n")
    hostile = ToolUse("read", raw_arguments='{"path": "a.txt", "offset": NaN, "limit": Infinity}')
    wire.server.add(Reply(tool_calls=[hostile]), Reply(text="done"))
    result = wire.run("-p", "go")
    assert result.returncode == 0 and result.stdout == "done\n", result.stderr
    strict_json(wire.server.requests[1].raw.decode())  # the next request is valid JSON on every wire
    body = json.dumps(wire.server.requests[1].body)
    assert "offset: must be number (NaN is not a number JSON allows)" in body
    assert "limit: must be number (Infinity is not a number JSON allows)" in body
    assert '\\"offset\\": NaN' in body  # the model sees what it sent
    for line in session_text(wire).splitlines():
        strict_json(line)
    wire.server.add(Reply(text="next"))
    assert wire.run("-c", "-p", "again").returncode == 0
