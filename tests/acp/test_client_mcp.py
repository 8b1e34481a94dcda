"""MCP servers the editor passes in ``session/new`` are connected through pi's MCP plugin, for that session only."""

from __future__ import annotations

import sys
from pathlib import Path

from acp import schema, text_block

from pi_core.testing.fake_server import Reply
from tests.acp.harness import AcpEnv, run, step

TIME_SERVER = str(Path(sys.executable).parent / "mcp-server-time")


def test_the_editors_stdio_mcp_server_serves_the_session(acp_env: AcpEnv) -> None:
    acp_env.server.add(Reply(tool_calls=[("mcp__editor_time__get_current_time", {"timezone": "Europe/Paris"})]),
                       Reply(text="It is time."), Reply(text="no tools here"))
    server = schema.McpServerStdio(name="editor time", command=TIME_SERVER, args=["--local-timezone", "UTC"], env=[])

    async def scenario() -> None:
        async with acp_env.connect() as (conn, editor, _process):
            sid = (await step(conn.new_session(cwd=str(acp_env.cwd), mcp_servers=[server]))).session_id
            assert (await step(conn.prompt(session_id=sid, prompt=[text_block("time?")]))).stop_reason == "end_turn"
            (call,) = editor.of_kind("tool_call")
            done = editor.tool_updates(call.tool_call_id)[-1]
            assert done.status == "completed" and "Europe/Paris" in done.content[0].content.text, done.content
            # another session of the same process does not get the editor's server
            other = (await step(conn.new_session(cwd=str(acp_env.cwd), mcp_servers=[]))).session_id
            await step(conn.prompt(session_id=other, prompt=[text_block("and here?")]))

    run(scenario())
    first, _second, third = (r.body for r in acp_env.server.requests)
    names = {d["name"] for d in first["tools"][0]["functionDeclarations"]}
    assert "mcp__editor_time__get_current_time" in names
    assert not any(d["name"].startswith("mcp__") for d in third["tools"][0]["functionDeclarations"])
    assert not (acp_env.home / "mcp.json").exists()  # never saved
