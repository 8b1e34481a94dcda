"""A server written with the SDK's server API that hangs, crashes mid-call, answers garbage or 10 MB, changes its
tool list and starts slowly: pi turns each into a result the model reads and keeps the session going (issue 18)."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from pi_core.testing.fake_server import Reply
from pi_core.testing.runner import PiRunner

from .conftest import fault_server, tool_names, tool_results, write_mcp


def last_result(pi: PiRunner, index: int) -> dict:
    return tool_results(pi.server.requests[index].body)[-1]


def test_hang_crash_malformed_then_recovery_in_one_session(pi: PiRunner) -> None:
    write_mcp(pi.home / "mcp.json", {"faults": fault_server(exposure="direct", timeout=2)})
    pi.server.add(
        Reply(tool_calls=[("mcp__faults__hang", {})]),
        Reply(tool_calls=[("mcp__faults__crash", {})]),
        Reply(tool_calls=[("mcp__faults__echo", {"text": "back again"})]),
        Reply(tool_calls=[("mcp__faults__malformed", {})]),
        Reply(tool_calls=[("mcp__faults__fail", {"reason": "disk full"})]),
        Reply(tool_calls=[("mcp__faults__image", {})]),
        Reply(text="survived"),
    )
    started = time.monotonic()
    result = pi.run("-p", "go", timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "survived\n"
    hang = last_result(pi, 1)
    assert hang["is_error"] and 'MCP server "faults" did not answer hang within 2 s' in hang["text"]
    crash = last_result(pi, 2)
    assert crash["is_error"] and 'MCP server "faults": Connection closed' in crash["text"]
    echo = last_result(pi, 3)  # the next call reconnected to a fresh server process
    assert not echo["is_error"] and echo["text"] == "back again"
    malformed = last_result(pi, 4)
    assert malformed["is_error"] and "malformed response from the server" in malformed["text"]
    assert "Traceback" not in malformed["text"] and "pydantic" not in malformed["text"]
    failed = last_result(pi, 5)
    assert failed["is_error"] and "the operation failed: disk full" in failed["text"]
    image = tool_results(pi.server.requests[6].body)[-1]
    assert [c["type"] for c in image["content"]] == ["text", "image"]
    assert time.monotonic() - started < 90


@pytest.mark.slow
def test_ten_megabyte_result_is_cut_in_the_middle_and_saved_whole(pi: PiRunner) -> None:
    write_mcp(pi.home / "mcp.json", {"faults": fault_server(exposure="direct")})
    pi.server.add(Reply(tool_calls=[("mcp__faults__big", {"size_mb": 10})]), Reply(text="ok"))
    result = pi.run("-p", "big", timeout=120)
    assert result.returncode == 0, result.stderr
    text = last_result(pi, 1)["text"]
    assert len(text.encode()) < 21 * 1024
    assert text.startswith("Warning: truncated output (original token count: ")
    assert re.search(r"Total output lines: \d{5,}", text)
    assert re.search(r"…\d+ chars truncated…", text)
    assert text.split("\n\n", 1)[1].startswith("0000000 0123456789")
    match = re.search(r"\[Full output: (\S+) \(read it with offset/limit\)\]", text)
    assert match is not None
    # the full text was saved for the model, in this run's temp directory (gone once pi exits)
    assert "pi-mcp-" in match.group(1) and match.group(1).endswith(".txt")


def test_changed_tool_list_adds_and_withdraws_tools(pi: PiRunner) -> None:
    write_mcp(pi.home / "mcp.json", {"faults": fault_server(exposure="direct")})
    pi.server.add(
        Reply(tool_calls=[("mcp__faults__add_tool", {"name": "extra"})]),
        Reply(tool_calls=[("mcp__faults__extra", {})]),
        Reply(tool_calls=[("mcp__faults__remove_tool", {"name": "extra"})]),
        Reply(tool_calls=[("mcp__faults__extra", {})]),
        Reply(text="ok"),
    )
    result = pi.run("-p", "go", timeout=120)
    assert result.returncode == 0, result.stderr
    assert "mcp__faults__extra" not in tool_names(pi.server.requests[0].body)
    assert "mcp__faults__extra" in tool_names(pi.server.requests[1].body)
    assert last_result(pi, 2)["text"] == "I am extra"
    assert "mcp__faults__extra" not in tool_names(pi.server.requests[3].body)
    withdrawn = last_result(pi, 4)
    assert withdrawn["is_error"] and "Tool mcp__faults__extra not found" in withdrawn["text"]


@pytest.mark.slow
def test_progress_notifications_restart_the_timeout(pi: PiRunner) -> None:
    write_mcp(pi.home / "mcp.json", {"faults": fault_server(exposure="direct", timeout=1.5)})
    pi.server.add(Reply(tool_calls=[("mcp__faults__slow_progress", {"seconds": 4, "step": 0.5})]), Reply(text="ok"))
    result = pi.run("--mode", "json", "go", timeout=120)
    assert result.returncode == 0, result.stderr
    answer = last_result(pi, 1)
    assert not answer["is_error"], answer["text"]
    assert answer["text"].startswith("finished after ")
    updates = [json.loads(line) for line in result.stdout.splitlines() if '"tool_execution_update"' in line]
    if updates:  # JSON mode streams tool updates once issue 16 item 3 lands
        assert updates[0]["partialResult"]["content"][0]["text"] == "step 1"


@pytest.mark.slow
def test_slow_start_holds_the_first_prompt_only_for_direct_servers(pi: PiRunner) -> None:
    write_mcp(pi.home / "mcp.json", {"slow": fault_server("--slow-start", "3", exposure="direct"),
                                     "lazy": fault_server("--slow-start", "45", exposure="deferred")})
    pi.server.add(Reply(text="ok"))
    started = time.monotonic()
    result = pi.run("-p", "go", timeout=120)
    assert result.returncode == 0, result.stderr
    assert "mcp__slow__echo" in tool_names(pi.server.requests[0].body)  # waited for the direct server
    assert time.monotonic() - started < 40  # not for the deferred one that needs 45 s


@pytest.mark.slow
def test_first_prompt_waits_at_most_ten_seconds(pi: PiRunner) -> None:
    del pi.extra_env["PI_MCP_STARTUP_WAIT"]  # Pi's own limit
    write_mcp(pi.home / "mcp.json", {"slow": fault_server("--slow-start", "60", exposure="direct")})
    pi.server.add(Reply(text="ok"))
    started = time.monotonic()
    result = pi.run("-p", "go", timeout=120)
    assert result.returncode == 0, result.stderr
    assert 9 < time.monotonic() - started < 40
    assert "mcp__slow__echo" not in tool_names(pi.server.requests[0].body)
    assert "MCP servers are still connecting; their tools become available once connected." in result.stderr


def test_failed_server_keeps_its_stderr_tail_and_others_still_work(pi: PiRunner) -> None:
    write_mcp(pi.home / "mcp.json", {"broken": fault_server("--crash-at-start", exposure="direct"),
                                     "faults": fault_server(exposure="direct"),
                                     "missing": {"command": "/nonexistent/mcp-server", "exposure": "direct"}})
    pi.server.add(Reply(tool_calls=[("mcp__faults__log", {"message": "disk almost full\nsecond line"})]),
                  Reply(text="ok"))
    result = pi.run("-p", "go", timeout=120)
    assert result.returncode == 0, result.stderr
    assert "mcp__faults__echo" in tool_names(pi.server.requests[0].body)
    assert "MCP servers need attention:" in result.stderr
    assert "broken: failed:" in result.stderr and "missing: failed: command not found" in result.stderr
    status = pi.run("mcp", "list")
    assert status.returncode == 1
    assert "cannot open the database at /nonexistent (permission denied)" in status.stdout
    log = (pi.home / "mcp.log").read_text()
    assert re.search(r"^\d{4}-\d\d-\d\dT[\d:.]+Z \[faults\] warning faults: disk almost full\n    second line$",
                     log, re.MULTILINE)


def test_mcp_log_rotates_past_5_mb(tmp_path: Path) -> None:
    from pi_plugins.mcp.log import MAX_LOG_BYTES, ServerLog

    path = tmp_path / "mcp.log"
    path.write_bytes(b"x" * (MAX_LOG_BYTES + 1))
    ServerLog(path).write("s", "info", None, "after rotation")
    assert (tmp_path / "mcp.log.1").stat().st_size == MAX_LOG_BYTES + 1
    assert path.read_text().endswith("[s] info after rotation\n")
