"""Two SDK sessions in one process, each with its own project's MCP servers: neither waits for, reaches or
ends the other's (docs/mcp.md#lifecycle)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pi_core.sdk import Session, create_session
from pi_core.testing.fake_server import FakeModelServer, Reply
from pi_core.testing.kit import write_fake_models

from .conftest import alive, fault_server, wait_dead, write_mcp


@pytest.fixture
def server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeModelServer]:
    home = tmp_path / "agent"
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(home))
    monkeypatch.setenv("PI_MCP_STARTUP_WAIT", "60")  # a loaded test machine can be slow to start a server
    with FakeModelServer() as fake:
        write_fake_models(home, fake)
        yield fake


def project(root: Path, name: str, **servers: dict[str, object]) -> Path:
    folder = root / name
    write_mcp(folder / ".pi" / "mcp.json", servers)
    return folder


def tool_texts(session: Session) -> list[str]:
    return [m.content[0].text for m in session.state.messages if m.role == "toolResult"]


async def pids(pidfile: Path, timeout: float = 60.0) -> list[int]:
    """Waits on the loop, not beside it: the sessions start their servers in tasks of this loop."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pidfile.exists() and pidfile.read_text().split():
            return [int(line) for line in pidfile.read_text().split()]
        await asyncio.sleep(0.1)
    raise AssertionError(f"no server wrote {pidfile}")


def test_two_sessions_keep_to_their_own_servers(tmp_path: Path, server: FakeModelServer) -> None:
    asyncio.run(_two_sessions(tmp_path, server))


async def _two_sessions(tmp_path: Path, server: FakeModelServer) -> None:
    # the first project's server takes minutes to start; the second's tool_search must not wait for it
    slow = project(tmp_path, "slow", slow=fault_server("--pidfile", str(tmp_path / "slow.pids"), "--slow-start", "120",
                                                       exposure="deferred"))
    quick = project(tmp_path, "quick", quick=fault_server("--pidfile", str(tmp_path / "quick.pids"),
                                                          exposure="deferred"))
    first = await create_session(cwd=slow, model="fake/fake-model", trust_project=True)
    second = await create_session(cwd=quick, model="fake/fake-model", trust_project=True)
    server.add(Reply(tool_calls=[("tool_search", {"query": "echo the text"})]),
               Reply(tool_calls=[("mcp__quick__echo", {"text": "hi"}), ("mcp__slow__echo", {"text": "hi"})]),
               Reply(text="done"))
    started = time.monotonic()
    await second.prompt("echo hi")
    assert time.monotonic() - started < 60, "the second session waited for the first one's server"
    search, echo, other = tool_texts(second)
    assert "mcp__quick__echo" in search and "mcp__slow" not in search
    assert echo == "hi" and other == "Tool mcp__slow__echo not found"
    slow_pids = await pids(tmp_path / "slow.pids")  # started 2 s after its session, still starting
    await first.dispose()
    assert wait_dead(slow_pids) == []
    [quick_pid] = await pids(tmp_path / "quick.pids")
    assert alive(quick_pid)  # the other session's server lives on, and answers
    server.add(Reply(tool_calls=[("mcp__quick__echo", {"text": "again"})]), Reply(text="done"))
    await second.prompt("echo again")
    assert tool_texts(second)[-1] == "again"
    await second.dispose()
    assert wait_dead([quick_pid]) == []
