"""Under a confining sandbox (issue 35) the editor is no way around it: paths are checked against the policy
before the client sees them, and bash runs in pi, confined, instead of in the client's terminal."""

from __future__ import annotations

import importlib.util

import pytest
from acp import text_block

from pi_core.testing.fake_server import Reply
from tests.acp.harness import AcpEnv, run, step

pytestmark = pytest.mark.skipif(importlib.util.find_spec("pi_core.toolkit.sandbox") is None,
                                reason="the sandbox (issue 35) has not landed")


def test_a_read_only_sandbox_keeps_the_editors_fs_and_terminal_out(acp_env: AcpEnv) -> None:
    acp_env.server.add(Reply(tool_calls=[("write", {"path": "out.txt", "content": "x\n"}),
                                         ("bash", {"command": "echo confined; touch made.txt"})]),
                       Reply(text="done"))

    async def scenario() -> None:
        async with acp_env.connect("--sandbox", "read-only", fs=True, terminal=True) as (conn, editor, _process):
            sid = (await step(conn.new_session(cwd=str(acp_env.cwd), mcp_servers=[]))).session_id
            assert (await step(conn.prompt(session_id=sid, prompt=[text_block("try")]))).stop_reason == "end_turn"
            assert editor.writes == [] and editor.commands == []
            write_call, bash_call = editor.of_kind("tool_call")
            refused = editor.tool_updates(write_call.tool_call_id)[-1]
            assert refused.status == "failed" and "blocked by the sandbox" in refused.content[0].content.text
            ran = editor.tool_updates(bash_call.tool_call_id)[-1]
            assert "confined" in ran.content[0].content.text

    run(scenario())
    assert not (acp_env.cwd / "out.txt").exists() and not (acp_env.cwd / "made.txt").exists()
