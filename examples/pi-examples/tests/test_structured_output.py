"""structured_output: the tool's result ends the run, so the model is asked only once."""

from __future__ import annotations

import json

from pi_core.testing.fake_script import Reply

ANSWER = {"headline": "Ship it", "summary": "All checks pass.", "actionItems": ["tag v1", "announce"]}


def test_result_terminates_the_run_without_a_second_request(example) -> None:
    example.server.add(Reply(tool_calls=[("structured_output", ANSWER)]), Reply(text="should not be asked"))
    done = example.run("structured_output", "--no-session", "--mode", "json", "summarise")
    assert done.returncode == 0, done.stderr
    assert len(example.server.requests) == 1
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    end = next(e for e in events if e["type"] == "tool_execution_end")
    assert end["result"]["details"] == ANSWER
    assert end["result"]["content"][0]["text"] == "Saved structured output: Ship it"
    body = example.server.requests[0].body
    tool = next(t for t in body["tools"] if t["name"] == "structured_output")
    assert tool["input_schema"]["required"] == ["headline", "summary", "actionItems"]
    system = "".join(block["text"] for block in body["system"])
    assert "- structured_output: Emit a final structured answer as a terminating tool result" in system
    assert "After calling structured_output, do not emit another assistant response in the same turn." in system


def test_renderer_draws_headline_summary_and_numbered_items() -> None:
    from pi_examples.structured_output import render_result

    from pi_core.tools import ToolResult

    drawn = render_result(ToolResult.text("Saved structured output: Ship it", details=ANSWER), False, False)
    assert drawn.plain == "Ship it\nAll checks pass.\n\n1. tag v1\n2. announce"
    assert render_result(ToolResult.text("boom"), True, False).plain == "boom"
