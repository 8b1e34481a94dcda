"""pi's permission hooks ask the editor: the ported permission_gate example's question becomes a
``session/request_permission`` on the bash call it is about, and the editor's answer decides whether it runs."""

from __future__ import annotations

from typing import Any

import pytest
from acp import text_block

from pi_core.testing.fake_server import Reply
from tests.acp.harness import AcpEnv, run, step

DANGEROUS = "rm -rf junk"


def _gated_rm(acp_env: AcpEnv, choose: Any) -> tuple[Any, list[dict[str, Any]]]:
    (acp_env.cwd / "junk").mkdir()
    acp_env.server.add(Reply(tool_calls=[("bash", {"command": DANGEROUS})]), Reply(text="done"))

    async def scenario() -> Any:
        async with acp_env.connect("-e", "plugin:permission_gate") as (conn, editor, _process):
            editor.choose = choose
            sid = (await step(conn.new_session(cwd=str(acp_env.cwd), mcp_servers=[]))).session_id
            response = await step(conn.prompt(session_id=sid, prompt=[text_block("clean up")]))
            assert response.stop_reason == "end_turn"
            return editor

    editor = run(scenario())
    results = [e["message"] for e in acp_env.entries() if e["type"] == "message"
               and e["message"]["role"] == "toolResult"]
    return editor, results


def test_the_editor_allows_a_gated_command(acp_env: AcpEnv) -> None:
    editor, results = _gated_rm(acp_env, lambda options: next(o.option_id for o in options if o.name == "Yes"))
    (asked,) = editor.permissions
    (call,) = editor.of_kind("tool_call")
    # the question is about the bash call the client already shows, with pi's choices and their kinds
    assert asked.tool_call.tool_call_id == call.tool_call_id
    assert "Dangerous command" in asked.tool_call.content[0].content.text and DANGEROUS in \
        asked.tool_call.content[0].content.text
    assert [(o.name, o.kind) for o in asked.options] == [("Yes", "allow_once"), ("No", "reject_once")]
    assert not (acp_env.cwd / "junk").exists()
    assert results[0]["isError"] is False
    assert editor.tool_updates(call.tool_call_id)[-1].status == "completed"


@pytest.mark.parametrize("answer", ["No", "dismissed"])
def test_the_editor_refuses_a_gated_command(acp_env: AcpEnv, answer: str) -> None:
    def choose(options: list[Any]) -> str | None:
        return next(o.option_id for o in options if o.name == "No") if answer == "No" else None

    editor, results = _gated_rm(acp_env, choose)
    assert len(editor.permissions) == 1
    assert (acp_env.cwd / "junk").is_dir()  # the command never ran
    (call,) = editor.of_kind("tool_call")
    assert editor.tool_updates(call.tool_call_id)[-1].status == "failed"
    assert results[0]["isError"] is True and "Blocked by user" in results[0]["content"][0]["text"]
    # the model is told, and the turn goes on to its answer
    assert "Blocked by user" in str(acp_env.server.requests[1].body["contents"])
    assert editor.text() == "done"
