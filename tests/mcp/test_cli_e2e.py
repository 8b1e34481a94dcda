"""End to end through the real ``pi`` command against the fake model server, with real MCP servers (issue 18)."""

from __future__ import annotations

import json
import re
import subprocess

import pytest

from pi_core.testing.fake_server import Reply
from pi_core.testing.runner import PiRunner

from .conftest import fault_server, time_server, tool_names, tool_results, write_mcp


def test_model_calls_the_real_time_server_and_reads_its_answer(pi: PiRunner) -> None:
    write_mcp(pi.home / "mcp.json", {"time": time_server(exposure="direct")})
    pi.server.add(Reply(tool_calls=[("mcp__time__get_current_time", {"timezone": "Europe/Paris"})]),
                  Reply(text="It is noon somewhere."))
    result = pi.run("-p", "what time is it in Paris?")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "It is noon somewhere.\n"
    first = pi.server.requests[0].body
    assert "mcp__time__get_current_time" in tool_names(first)  # direct: declared in the first request
    [answer] = tool_results(pi.server.requests[1].body)
    assert answer["is_error"] is False
    payload = json.loads(answer["text"])  # mcp-server-time's own answer, as it sent it
    assert payload["timezone"] == "Europe/Paris"
    assert re.match(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+0[12]:00", payload["datetime"])


def test_deferred_tool_is_found_with_tool_search_then_called(pi: PiRunner) -> None:
    write_mcp(pi.home / "mcp.json", {"time": time_server(exposure="deferred", description="Clock and time zones")})
    pi.server.add(Reply(tool_calls=[("tool_search", {"query": "current time in a timezone"})]),
                  Reply(tool_calls=[("mcp__time__get_current_time", {"timezone": "Asia/Tokyo"})]),
                  Reply(text="done"))
    result = pi.run("-p", "time in Tokyo?")
    assert result.returncode == 0, result.stderr
    first, second, third = (r.body for r in pi.server.requests)
    assert "tool_search" in tool_names(first)  # activated because a deferred server is configured
    assert not [n for n in tool_names(first) if n.startswith("mcp__")]  # deferred: not declared yet
    listing = json.dumps(first["messages"])
    assert "mcp__time (tool_search): Clock and time zones" in listing  # the mcp_servers list
    [search] = tool_results(second)
    assert search["text"].startswith("Loaded ")
    assert "- mcp__time__get_current_time: " in search["text"]
    assert "mcp__time__get_current_time" in tool_names(second)  # declared from the next call
    answer = tool_results(third)[-1]
    assert json.loads(answer["text"])["timezone"] == "Asia/Tokyo"


@pytest.mark.slow
def test_codemode_exposure_is_reached_like_deferred(pi: PiRunner) -> None:
    write_mcp(pi.home / "mcp.json", {"time": time_server()})  # Pi's default exposure: codemode
    pi.server.add(Reply(tool_calls=[("tool_search", {"query": "convert time"})]), Reply(text="ok"))
    assert pi.run("-p", "x").returncode == 0
    assert "mcp__time__convert_time" in tool_names(pi.server.requests[1].body)


def test_tools_flag_keeps_mcp_tools_unless_an_entry_starts_with_mcp(pi: PiRunner) -> None:
    write_mcp(pi.home / "mcp.json", {"time": time_server(exposure="direct"),
                                     "faults": fault_server(exposure="direct")})
    pi.server.add(Reply(text="1"), Reply(text="2"), Reply(text="3"), Reply(text="4"))
    assert pi.run("-p", "--tools", "read,mcp__time__*", "x").returncode == 0
    assert tool_names(pi.server.requests[0].body) == ["read", "mcp__time__get_current_time",
                                                      "mcp__time__convert_time"]
    assert pi.run("-p", "--exclude-tools", "mcp__*", "x").returncode == 0
    assert tool_names(pi.server.requests[1].body) == ["read", "bash", "edit", "write"]
    result = pi.run("-p", "--no-mcp", "x")
    assert result.returncode == 0, result.stderr
    assert tool_names(pi.server.requests[2].body) == ["read", "bash", "edit", "write"]
    # an allowlist without mcp__ entries keeps MCP tools out of the declarations (only tool_search may load them)
    assert pi.run("-p", "--tools", "read", "x").returncode == 0
    assert tool_names(pi.server.requests[3].body) == ["read"]


@pytest.mark.slow
def test_disable_plugin_mcp_connects_nothing(pi: PiRunner) -> None:
    marker = pi.cwd / "started"
    write_mcp(pi.home / "mcp.json", {"faults": fault_server("--pidfile", str(marker), exposure="direct")})
    pi.server.add(Reply(text="ok"))
    result = pi.run("-p", "--disable-plugin", "mcp", "x")
    assert result.returncode == 0, result.stderr
    assert not marker.exists()
    assert tool_names(pi.server.requests[0].body) == ["read", "bash", "edit", "write"]


def test_invalid_entries_are_reported_once_and_the_others_connect(pi: PiRunner) -> None:
    write_mcp(pi.home / "mcp.json", {
        "time": time_server(exposure="direct"),
        "old": {"type": "sse", "url": "http://127.0.0.1:9/sse"},
        "bad name!": {"command": "x"},
        "nothing": {"args": ["x"]},
        "slow": {"command": "x", "timeout": -1},
    })
    pi.server.add(Reply(text="ok"))
    result = pi.run("-p", "x")
    assert result.returncode == 0, result.stderr
    assert "mcp__time__get_current_time" in tool_names(pi.server.requests[0].body)
    err = result.stderr
    assert err.count("legacy SSE transport is not supported; use the streamable HTTP URL") == 1
    assert 'invalid server name "bad name!"' in err
    assert 'server "nothing" needs either "command" (stdio) or "url" (streamable HTTP)' in err
    assert 'server "slow": timeout must be a positive number of seconds' in err


def test_project_mcp_json_loads_only_after_trust(pi: PiRunner) -> None:
    write_mcp(pi.cwd / ".pi" / "mcp.json", {"time": time_server(exposure="direct")})
    pi.server.add(Reply(text="1"), Reply(text="2"))
    assert pi.run("-p", "x").returncode == 0
    assert not [n for n in tool_names(pi.server.requests[0].body) if n.startswith("mcp__")]
    (pi.home / "trust.json").write_text(json.dumps({str(pi.cwd.parent): True}))  # a parent's decision applies
    assert pi.run("-p", "x").returncode == 0
    assert "mcp__time__get_current_time" in tool_names(pi.server.requests[1].body)


@pytest.mark.slow
def test_project_override_changes_only_enabled_and_exposure(pi: PiRunner) -> None:
    write_mcp(pi.home / "mcp.json", {"time": time_server(exposure="direct")})
    write_mcp(pi.cwd / ".pi" / "mcp.json", {"time": {"enabled": False}})
    (pi.home / "trust.json").write_text(json.dumps({str(pi.cwd): True}))
    pi.server.add(Reply(text="1"))
    assert pi.run("-p", "x").returncode == 0
    assert not [n for n in tool_names(pi.server.requests[0].body) if n.startswith("mcp__")]


@pytest.mark.slow
def test_json_and_rpc_modes_see_the_same_servers(pi: PiRunner) -> None:
    write_mcp(pi.home / "mcp.json", {"time": time_server(exposure="direct")})
    pi.server.add(Reply(tool_calls=[("mcp__time__get_current_time", {"timezone": "UTC"})]), Reply(text="json"))
    result = pi.run("--mode", "json", "x")
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    ends = [e for e in events if e.get("type") == "tool_execution_end"]
    assert ends and ends[0]["toolName"] == "mcp__time__get_current_time" and not ends[0]["isError"]
    pi.server.add(Reply(tool_calls=[("mcp__time__get_current_time", {"timezone": "UTC"})]), Reply(text="rpc"))
    process = subprocess.Popen(pi.command("--mode", "rpc"), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True, cwd=pi.cwd, env=pi.env())
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(json.dumps({"id": "1", "type": "prompt", "message": "x"}) + "\n")
    process.stdin.flush()
    lines = []
    for line in process.stdout:  # an RPC client keeps stdin open until the run ended (EOF quits at once)
        lines.append(line)
        if '"type":"agent_end"' in line.replace(" ", ""):
            break
    process.stdin.close()
    process.wait(timeout=60)
    assert "mcp__time__get_current_time" in tool_names(pi.server.requests[2].body)
    assert '"toolName":"mcp__time__get_current_time"' in "".join(lines).replace(" ", "")


def test_slash_mcp_prints_status_in_print_mode(pi: PiRunner) -> None:
    write_mcp(pi.home / "mcp.json", {"time": time_server(exposure="direct"), "off": time_server(enabled=False)})
    result = pi.run("-p", "/mcp")
    assert result.returncode == 0, result.stderr
    assert "time: connected · 2 tools · resources · direct · global" in result.stdout
    assert "off: disabled · codemode · global" in result.stdout
    assert pi.server.requests == []
