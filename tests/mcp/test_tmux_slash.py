"""/mcp in the interactive UI (issue 18): status, a server's tools, reconnect, disable/enable saved back to the
file that defines the server; the real ``pi`` in tmux with the real ``mcp-server-time``."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest

from tests.interactive.tmux_kit import pi_rig

from .conftest import time_server, write_mcp

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


def test_slash_mcp_status_tools_reconnect_and_disable_in_the_tui(tmp_path: Path) -> None:
    with pi_rig(tmp_path, "mcp-slash") as rig:
        write_mcp(rig.home / "mcp.json", {"time": time_server(exposure="direct")}, theme="kept")
        rig.start(env={"PI_MCP_STARTUP_WAIT": "60"})
        rig.tmux.wait_for("(fake) fake-model")

        def slash(text: str, expect: str) -> str:
            rig.tmux.type(text)
            time.sleep(0.5)  # let the completion menu settle, as a person would
            rig.tmux.keys("Enter")
            return rig.tmux.wait_for(expect, 60)

        slash("/mcp", "connected · 2 tools · resources · direct · global")  # the manager (test_tmux_manager.py)
        rig.tmux.keys("Escape")
        rig.tmux.wait_gone("MCP servers", 20)
        slash("/mcp tools time", "Tools of time (exposure direct):")
        assert "get_current_time:" in rig.tmux.screen() and "convert_time:" in rig.tmux.screen()
        slash("/mcp reconnect time", 'Reconnected to MCP server "time" (connected')
        slash("/mcp disable time", 'Disabled MCP server "time"')
        saved = json.loads((rig.home / "mcp.json").read_text())
        assert saved["mcpServers"]["time"]["enabled"] is False and saved["theme"] == "kept"
        slash("/mcp enable time", 'Enabled MCP server "time"')
        assert json.loads((rig.home / "mcp.json").read_text())["mcpServers"]["time"].get("enabled", True) is True
        assert rig.server.requests == []  # none of it went to the model
