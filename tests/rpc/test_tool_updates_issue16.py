"""Issue 16 item 3: JSON and RPC modes stream ``tool_execution_update`` while a tool runs, throttled
the same way in every mode (at most one per interval, the latest of a burst kept, all before the end)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from pi_core.testing.fake_provider import reply
from pi_core.testing.fake_server import Reply
from pi_core.testing.runner import pi_runner
from pi_core.tool_updates import UPDATE_INTERVAL_SECONDS
from pi_core.tools import Tool, ToolContext, ToolResult

from .conftest import Rig

SLOW_LINES = "for i in 1 2 3 4; do echo line$i; sleep 0.3; done"


def test_json_mode_streams_bash_output_as_it_comes(tmp_path: Path) -> None:
    with pi_runner(tmp_path) as pi:
        pi.server.add(Reply(tool_calls=[("bash", {"command": SLOW_LINES})]), Reply(text="done"))
        result = pi.run("--mode", "json", "go")
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    kinds = [e["type"] for e in events]
    start, end = kinds.index("tool_execution_start"), kinds.index("tool_execution_end")
    updates = [e for e in events[start:end] if e["type"] == "tool_execution_update"]
    texts = ["".join(b["text"] for b in u["partialResult"]["content"]) for u in updates]
    # the output arrives line by line, long before the command ends
    assert "line1\n" in texts and texts[-1] == "line1\nline2\nline3\nline4\n"
    assert all(u["toolName"] == "bash" and u["args"] == {"command": SLOW_LINES} for u in updates)
    assert "details" not in events[end]["result"] or events[end]["result"]["details"] is not None


def _chatty_tool(count: int) -> Tool:
    def execute(args: dict[str, Any], ctx: ToolContext) -> str:
        for index in range(count):
            ctx.update(ToolResult.text(str(index), {"step": index}))
            time.sleep(0.002)
        return "finished"

    return Tool(name="chatty", description="Reports progress very often.", parameters={"type": "object"},
                execute=execute)


def test_rpc_updates_are_throttled_and_end_with_the_latest(rig: Rig) -> None:
    client = rig.start(reply(tool_calls=[("chatty", {})]), reply("ok"), tools=[_chatty_tool(300)])
    started = time.monotonic()
    events = client.prompt_and_wait("go")
    elapsed = time.monotonic() - started
    kinds = [e["type"] for e in events]
    updates = [e for e in events if e["type"] == "tool_execution_update"]
    assert updates, kinds
    assert len(updates) <= elapsed / UPDATE_INTERVAL_SECONDS + 2 < 300
    last = updates[-1]["partialResult"]
    assert last == {"content": [{"type": "text", "text": "299"}], "details": {"step": 299}}
    assert kinds.index("tool_execution_end") > kinds.index("tool_execution_update")
    assert max(i for i, k in enumerate(kinds) if k == "tool_execution_update") < kinds.index("tool_execution_end")
