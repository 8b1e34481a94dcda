"""Issue 37 item 1: JSON and RPC streams in Pi 1.6.0's shapes (docs/cli.md#json-event-lines).

``tool_execution_end`` carries ``durationMs`` (how long the tool ran; absent when it did not run) and the
tool's data as ``result.structuredContent`` (bash: output, truncation, exit code, wall time; read: the text),
and a session's first run opens with a ``system`` message declaring the prompt's sections and the tools."""

from __future__ import annotations

import json
import subprocess
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


def _system(events: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    return [(e["type"], e["message"]) for e in events
            if e["type"] in ("message_start", "message_end") and e["message"]["role"] == "system"]


def test_first_run_declares_prompt_sections_and_tools(tmp_path: Path) -> None:
    with pi_runner(tmp_path) as pi:
        pi.server.add(Reply(text="done"))
        result = pi.run("--mode", "json", "--tools", "read,bash", "--append-system-prompt", "Be brief.", "hi")
        sent = pi.server.requests[0].body["system"]
    assert result.returncode == 0, result.stderr
    events = _events(result.stdout)
    kinds = [e["type"] for e in events[:6]]
    assert kinds == ["session", "agent_start", "turn_start", "message_start", "message_end", "message_start"]
    assert [kind for kind, _ in _system(events)] == ["message_start", "message_end"]
    message = _system(events)[1][1]
    assert message["content"] == "" and isinstance(message["timestamp"], int)
    sections = message["sections"]
    assert list(sections) == ["preamble", "tools", "rules", "docs", "addendum", "date", "cwd"]
    assert sections["addendum"] == "Be brief."
    assert sections["tools"].startswith("Available tools:\n- read: ")
    assert sections["cwd"] == f"Current working directory: {pi.cwd}"
    prompt = "".join(block["text"] for block in sent)
    for text in sections.values():  # every section is text the model got
        assert text in prompt
    assert [tool["name"] for tool in message["toolsAdded"]] == ["read", "bash"]
    assert message["toolsAdded"][1]["parameters"]["required"] == ["command"]
    assert "toolsRemoved" not in message
    assert events[5]["message"]["role"] == "user"  # the declaration comes before the prompt, as in Pi


def test_rpc_declares_once_per_session_and_again_after_new_session(tmp_path: Path) -> None:
    with pi_runner(tmp_path) as pi:
        pi.server.add(Reply(text="one"), Reply(text="two"), Reply(text="three"))
        proc = subprocess.Popen(pi.command("--mode", "rpc"), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, text=True, cwd=pi.cwd, env=pi.env())

        def run(command: dict[str, Any], until: str) -> list[dict[str, Any]]:
            assert proc.stdin is not None and proc.stdout is not None
            proc.stdin.write(json.dumps(command) + "\n")
            proc.stdin.flush()
            seen = []
            for line in proc.stdout:
                seen.append(json.loads(line))
                if seen[-1].get("type") == until:
                    return seen
            raise AssertionError(f"no {until}: {seen}")

        first = run({"type": "prompt", "message": "hi"}, "agent_settled")
        second = run({"type": "prompt", "message": "again"}, "agent_settled")
        run({"id": "n", "type": "new_session"}, "response")
        third = run({"type": "prompt", "message": "fresh"}, "agent_settled")
        proc.stdin.close()
        proc.wait(timeout=30)
    assert len(_system(first)) == 2 and _system(first)[1][1]["sections"]["preamble"].startswith("You are")
    assert _system(second) == []  # nothing changed: nothing declared
    assert len(_system(third)) == 2 and "toolsAdded" in _system(third)[1][1]
