"""Issue 37 item 1: JSON and RPC streams in Pi 1.6.0's shapes (docs/cli.md#json-event-lines).

``tool_execution_end`` carries ``durationMs`` (how long the tool ran; absent when it did not run) and the
tool's data as ``result.structuredContent`` (bash: output, truncation, exit code, wall time; read: the text),
and a session's first run opens with a ``system`` message declaring the prompt's sections and the tools."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pi_core.testing.fake_server import Reply
from pi_core.testing.runner import pi_runner


def _events(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines()]


def test_tool_execution_end_has_duration_and_structured_content(tmp_path: Path) -> None:
    with pi_runner(tmp_path) as pi:
        (pi.cwd / "a.txt").write_text("hello\n")
        pi.server.add(Reply(tool_calls=[("bash", {"command": "echo hi; sleep 0.2"}), ("read", {"path": "a.txt"}),
                                        ("read", {}), ("nosuch", {"x": 1})]), Reply(text="done"))
        result = pi.run("--mode", "json", "go")
    assert result.returncode == 0, result.stderr
    ends = {e["toolCallId"]: e for e in _events(result.stdout) if e["type"] == "tool_execution_end"}
    bash, read, invalid, unknown = (ends[f"toolu_fake_1_{i}"] for i in range(4))

    assert bash["result"]["content"] == [{"type": "text", "text": "hi\n"}]
    structured = bash["result"]["structuredContent"]
    assert structured == {"output": "hi\n", "truncated": False, "exit_code": 0,
                          "wall_time_seconds": structured["wall_time_seconds"]}
    assert 0.1 <= structured["wall_time_seconds"] < 30
    assert isinstance(bash["durationMs"], int) and bash["durationMs"] >= 150

    assert read["result"]["structuredContent"] == "hello\n"
    assert isinstance(read["durationMs"], int) and read["durationMs"] >= 0

    for never_ran in (invalid, unknown):  # a call refused before execute has no duration, no data
        assert never_ran["isError"] is True
        assert "durationMs" not in never_ran and "structuredContent" not in never_ran["result"]
