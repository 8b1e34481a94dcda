"""/mcp in the interactive UI opens the server manager at once, even while a server hangs on ``initialize``
(issue 38): each server's state live, and from the list a server is reconnected, disabled and enabled again
(saved to its mcp.json), or its stderr is read. The real ``pi`` in tmux with real MCP servers."""

from __future__ import annotations

import json
import re
import shutil
import time
from pathlib import Path

import pytest

from pi_core.testing.fake_server import Reply
from tests.interactive.tmux_kit import pi_rig

from .conftest import fault_server, time_server, tool_names, write_mcp

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


def test_slash_mcp_opens_at_once_and_manages_servers_while_one_hangs(tmp_path: Path) -> None:
    starts = tmp_path / "broken.pids"  # one line per start of the broken server
    with pi_rig(tmp_path, "mcp-manager") as rig:
        write_mcp(rig.home / "mcp.json", {
            "time": time_server(exposure="direct"),
            "hang": fault_server("--slow-start", "600", exposure="direct", timeout=600),  # never answers initialize
            "broken": fault_server("--crash-at-start", "--pidfile", str(starts), exposure="direct"),
        })
        rig.start(env={"PI_MCP_STARTUP_WAIT": "60"})
        rig.tmux.wait_for("(fake) fake-model")
        rig.tmux.type("/mcp")
        time.sleep(0.5)  # let the completion menu settle, as a person would
        rig.tmux.keys("Enter")
        screen = rig.tmux.wait_for("MCP servers", 20, visible=True)
        assert "hang" in rig.tmux.wait_for("connecting…", 20, visible=True)
        screen = rig.tmux.wait_for("connected · 2 tools", 60, visible=True)  # the list redraws by itself
        screen = rig.tmux.wait_for("failed: Connection closed · direct · global", 60, visible=True)
        rows = [line for line in screen.splitlines() if any(f" {n} " in line for n in ("time", "hang", "broken"))]
        assert [next(n for n in ("broken", "hang", "time") if f" {n} " in row) for row in rows] == \
            ["broken", "hang", "time"], screen  # those that need attention first
        assert "connecting…" in rows[1]

        rig.tmux.keys("Enter")  # broken: its menu, with the failure and its stderr
        screen = rig.tmux.wait_for("MCP server broken", 20, visible=True)
        assert "Reconnect" in screen and "Disable" in screen and re.search(r"Stderr +1 line\b", screen), screen
        rig.tmux.keys("Up", "Enter")  # the last item: Stderr
        screen = rig.tmux.wait_for("Stderr of broken", 20, visible=True)
        assert "cannot open the database at /nonexistent (permission denied)" in screen
        rig.tmux.keys("Escape")
        rig.tmux.wait_for("MCP server broken", 20, visible=True)
        assert len(starts.read_text().splitlines()) == 1
        rig.tmux.keys("Enter")  # Reconnect: started again, it fails again, and says so on the server's screen
        deadline = time.monotonic() + 60
        while len(starts.read_text().splitlines()) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert len(starts.read_text().splitlines()) == 2
        rig.tmux.wait_for("State: failed", 60, visible=True)
        rig.tmux.keys("Escape")

        rig.tmux.wait_for("MCP servers", 20, visible=True)
        rig.tmux.keys("Down", "Down", "Enter")  # time
        screen = rig.tmux.wait_for("MCP server time", 20, visible=True)
        assert "Tools" in screen and "2 offered" in screen
        rig.tmux.keys("Down", "Down", "Down", "Enter")  # Tools, Reconnect, Exposure, Disable
        rig.tmux.wait_for("State: disabled", 30, visible=True)
        saved = json.loads((rig.home / "mcp.json").read_text())
        assert saved["mcpServers"]["time"]["enabled"] is False
        rig.tmux.keys("Enter")  # Enable: the first item now
        rig.tmux.wait_for("State: connected · 2 tools", 60, visible=True)
        assert json.loads((rig.home / "mcp.json").read_text())["mcpServers"]["time"].get("enabled", True) is True
        rig.tmux.keys("Escape")
        rig.tmux.wait_for("MCP servers", 20, visible=True)
        assert "connecting…" in rig.tmux.visible()  # hang still hangs: nothing waited for it
        rig.tmux.keys("Escape")
        rig.tmux.wait_gone("MCP servers", 20)
        assert rig.server.requests == []  # none of it went to the model


def test_the_exposure_chosen_in_the_manager_is_saved_and_reaches_the_next_request(tmp_path: Path) -> None:
    with pi_rig(tmp_path, "mcp-exposure") as rig:
        write_mcp(rig.home / "mcp.json", {"time": time_server(exposure="direct")})
        rig.server.add(Reply(text="first"), Reply(text="second"))
        rig.start(env={"PI_MCP_STARTUP_WAIT": "60"})
        rig.tmux.wait_for("(fake) fake-model")

        def choose(exposure: str, moves: list[str]) -> None:
            rig.tmux.type("/mcp")
            time.sleep(0.5)  # let the completion menu settle, as a person would
            rig.tmux.keys("Enter")
            rig.tmux.wait_for("connected · 2 tools", 60, visible=True)
            rig.tmux.keys("Enter")
            rig.tmux.wait_for("MCP server time", 20, visible=True)
            rig.tmux.keys("Down", "Down", "Enter")  # Tools, Reconnect, Exposure
            rig.tmux.wait_for("Exposure of time", 20, visible=True)
            rig.tmux.keys(*moves, "Enter")  # codemode, deferred, direct, hidden; the current one selected
            rig.tmux.wait_for("MCP server time", 20, visible=True)
            deadline = time.monotonic() + 30
            while json.loads((rig.home / "mcp.json").read_text())["mcpServers"]["time"].get("exposure") != exposure:
                assert time.monotonic() < deadline, (rig.home / "mcp.json").read_text()
                time.sleep(0.1)
            rig.tmux.keys("Escape")
            rig.tmux.wait_for("MCP servers", 20, visible=True)
            rig.tmux.keys("Escape")
            rig.tmux.wait_gone("MCP servers", 20)

        choose("deferred", ["Up"])
        rig.command("what time is it?")
        rig.tmux.wait_for("first", 60)
        declared = tool_names(rig.server.requests[0].body)
        assert "tool_search" in declared and not any(n.startswith("mcp__time__") for n in declared)
        choose("direct", ["Down"])
        rig.command("and now?")
        rig.tmux.wait_for("second", 60)
        assert "mcp__time__get_current_time" in tool_names(rig.server.requests[1].body)
