"""No MCP process outlives pi: normal exit, Ctrl-C, SIGTERM and SIGHUP, wrapper children included (issue 18)."""

from __future__ import annotations

import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from pi_core.testing.fake_server import Reply
from pi_core.testing.runner import PiRunner

from .conftest import NPM_BIN, alive, fault_server, wait_dead, write_mcp


def _pids(pidfile: Path, count: int, timeout: float = 60.0) -> list[int]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pidfile.exists():
            pids = [int(line) for line in pidfile.read_text().split()]
            if len(pids) >= count:
                return pids
        time.sleep(0.1)
    raise AssertionError(f"the servers did not start: {pidfile.read_text() if pidfile.exists() else 'no pidfile'}")


def test_normal_exit_stops_servers_and_their_children(pi: PiRunner) -> None:
    pidfile = pi.cwd / "pids"
    write_mcp(pi.home / "mcp.json", {
        "direct": fault_server("--pidfile", str(pidfile), "--child", exposure="direct"),
        "stubborn": fault_server("--pidfile", str(pidfile), "--ignore-term", exposure="direct"),
    })
    pi.server.add(Reply(tool_calls=[("mcp__direct__echo", {"text": "hi"})]), Reply(text="bye"))
    result = pi.run("-p", "go", timeout=120)
    assert result.returncode == 0, result.stderr
    pids = _pids(pidfile, 3)
    assert wait_dead(pids, 5) == [], "an MCP server or its child outlived pi"


@pytest.mark.parametrize("signum", [pytest.param(signal.SIGINT, marks=pytest.mark.slow), signal.SIGTERM,
                                    pytest.param(signal.SIGHUP, marks=pytest.mark.slow)])
def test_signal_during_a_call_stops_every_server(pi: PiRunner, signum: int) -> None:
    pidfile = pi.cwd / "pids"
    write_mcp(pi.home / "mcp.json", {
        "faults": fault_server("--pidfile", str(pidfile), "--child", exposure="direct"),
        "other": fault_server("--pidfile", str(pidfile), exposure="deferred"),
    })
    pi.server.add(Reply(tool_calls=[("mcp__faults__hang", {})]), Reply(text="never"))
    process = pi.popen("-p", "go")
    try:
        pids = _pids(pidfile, 3)
        deadline = time.monotonic() + 60
        while len(pi.server.requests) < 1 and time.monotonic() < deadline:  # the hang call is running
            time.sleep(0.1)
        time.sleep(0.5)
        process.send_signal(signum)
        process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    expected = {signal.SIGINT: 130, signal.SIGTERM: 143, signal.SIGHUP: 129}[signum]
    assert process.returncode == expected
    assert wait_dead(pids, 5) == [], "an MCP server or its child outlived pi"


@pytest.mark.slow
def test_npx_wrapper_and_its_node_server_die_with_pi(pi: PiRunner) -> None:
    npx = shutil.which("npx")
    if npx is None or not (NPM_BIN / "mcp-server-everything").exists():
        pytest.skip("npx or @modelcontextprotocol/server-everything is missing (.ci/run installs it with npm)")
    write_mcp(pi.home / "mcp.json", {"everything": {
        "command": npx, "args": ["--prefix", str(NPM_BIN.parents[1]), "--offline", "mcp-server-everything"],
        "exposure": "direct"}})
    pi.server.add(Reply(tool_calls=[("mcp__everything__echo", {"message": "through npx"})]), Reply(text="done"))
    process = pi.popen("-p", "go")
    try:
        deadline = time.monotonic() + 60
        while len(pi.server.requests) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        tree = subprocess.run(["ps", "-eo", "pid,pgid,args"], check=True, capture_output=True, text=True).stdout
        servers = [int(line.split()[0]) for line in tree.splitlines() if "mcp-server-everything" in line
                   and "ps -eo" not in line]
        assert servers, tree
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    assert wait_dead(servers, 5) == [], [p for p in servers if alive(p)]
