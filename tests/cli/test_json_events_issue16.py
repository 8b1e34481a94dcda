"""Issue 16 item 16: JSON events shaped as Pi's: on Chat Completions every block ends at the stream's end
(``text_end`` after the interleaved tool-call deltas), an assistant ``message_start`` has no content
and zero usage and ``tool_execution_end`` carries no ``details: null`` (the ``queue_update`` order is tested in
tests/rpc/test_queue_order_issue16.py)."""

from __future__ import annotations

import json
from pathlib import Path

from pi_core.testing.fake_server import Reply
from pi_core.testing.runner import pi_runner


def test_json_events_on_the_chat_completions_wire(tmp_path: Path) -> None:
    with pi_runner(tmp_path, "openai-completions") as pi:
        pi.server.add(Reply(thinking="let me think", text="I will look",
                            tool_calls=[("ls", {"path": "."}), ("ls", {"path": ".."})]), Reply(text="done"))
        result = pi.run("--mode", "json", "go")
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    first = next(i for i, e in enumerate(events) if e["type"] == "message_end" and e["message"]["role"] == "assistant")
    blocks = [(e["assistantMessageEvent"]["type"], e["assistantMessageEvent"]["contentIndex"])
              for e in events[:first] if e["type"] == "message_update"
              and not e["assistantMessageEvent"]["type"].endswith("_delta")]
    assert blocks == [("thinking_start", 0), ("text_start", 1), ("toolcall_start", 2), ("toolcall_start", 3),
                      ("thinking_end", 0), ("text_end", 1), ("toolcall_end", 2), ("toolcall_end", 3)]

    starts = [e["message"] for e in events if e["type"] == "message_start" and e["message"]["role"] == "assistant"]
    assert len(starts) == 2
    for message in starts:
        assert message["content"] == []
        assert message["usage"]["input"] == 0 and message["usage"]["output"] == 0
        assert message["usage"]["totalTokens"] == 0 and message["usage"]["cost"]["total"] == 0

    ends = [e for e in events if e["type"] == "tool_execution_end"]
    assert len(ends) == 2
    for end in ends:
        assert end["result"].get("details", "absent") is not None  # never "details": null
