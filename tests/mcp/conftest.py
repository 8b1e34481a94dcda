"""Fixtures for the MCP tests: pi against the fake model server, with real MCP servers configured in mcp.json.

Tests marked ``slow`` (more signals, bigger payloads, more OAuth options) run with ``PI_SLOW_TESTS=1``.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pi_core.testing.runner import PiRunner, pi_runner

REPO = Path(__file__).resolve().parents[2]
SERVERS = Path(__file__).resolve().parent / "servers"
BIN = Path(sys.executable).parent
NPM_BIN = REPO / ".ci" / "npm" / "node_modules" / ".bin"


def python_server(script: str, *args: str) -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(SERVERS / script), *args]}


def fault_server(*args: str, **fields: Any) -> dict[str, Any]:
    return {**python_server("fault_server.py", *args), **fields}


def time_server(**fields: Any) -> dict[str, Any]:
    return {"command": str(BIN / "mcp-server-time"), "args": ["--local-timezone", "UTC"], **fields}


def npm_server(name: str, *args: str, **fields: Any) -> dict[str, Any]:
    """A server from npm, installed by .ci/run; skips (with the reason) when it could not be installed."""
    path = NPM_BIN / name
    if not path.exists():
        pytest.skip(f"{name} is not installed: .ci/run installs it with npm into .ci/npm (is npm available?)")
    return {"command": str(path), "args": list(args), **fields}


def write_mcp(path: Path, servers: dict[str, Any], **extra: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"mcpServers": servers, **extra}, indent=2))


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie is dead for our purpose
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def wait_dead(pids: list[int], timeout: float = 10.0) -> list[int]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        living = [p for p in pids if alive(p)]
        if not living:
            return []
        time.sleep(0.1)
    return [p for p in pids if alive(p)]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if os.environ.get("PI_SLOW_TESTS") == "1":
        return
    skip = pytest.mark.skip(reason="slow: set PI_SLOW_TESTS=1 to run")
    here = Path(__file__).parent
    for item in items:
        if "slow" in item.keywords and here in Path(str(item.fspath)).parents:
            item.add_marker(skip)


@pytest.fixture
def pi(tmp_path: Path) -> Iterator[PiRunner]:
    with pi_runner(tmp_path) as runner:
        # a loaded test machine can take longer than Pi's 10 s to start a Python server
        runner.extra_env["PI_MCP_STARTUP_WAIT"] = "60"
        yield runner


def tool_names(body: dict[str, Any]) -> list[str]:
    return [t.get("name") or t.get("function", {}).get("name") for t in body.get("tools", [])]


def tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    """Anthropic-wire tool_result blocks of a request, with their text joined."""
    found = []
    for message in body.get("messages", []):
        if message.get("role") == "user" and isinstance(message.get("content"), list):
            for block in message["content"]:
                if block.get("type") == "tool_result":
                    inner = block.get("content")
                    text = inner if isinstance(inner, str) else "".join(c.get("text", "") for c in inner or [])
                    found.append({**block, "text": text})
    return found
