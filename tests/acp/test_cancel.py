"""``session/cancel`` stops a turn as Escape does: the running command dies, the turn is saved as aborted, and
the session takes the next prompt."""

from __future__ import annotations

import asyncio

from acp import text_block

from pi_core.testing.fake_server import Reply
from tests.acp.harness import AcpEnv, alive, run, step, until

SLOW = "echo $$ > pid.txt; echo started; sleep 30; echo never"


def _cancel_mid_bash(acp_env: AcpEnv, *, terminal: bool) -> None:
    acp_env.server.add(Reply(tool_calls=[("bash", {"command": SLOW})]), Reply(text="after the cancel"))
    pid_file = acp_env.cwd / "pid.txt"

    async def scenario() -> None:
        async with acp_env.connect(terminal=terminal) as (conn, editor, _process):
            sid = (await step(conn.new_session(cwd=str(acp_env.cwd), mcp_servers=[]))).session_id
            turn = asyncio.ensure_future(conn.prompt(session_id=sid, prompt=[text_block("run the slow thing")]))
            await until(lambda: pid_file.exists() and pid_file.read_text().strip(), what="the command to start")
            pid = int(pid_file.read_text())
            await conn.cancel(session_id=sid)
            response = await step(turn)
            assert response.stop_reason == "cancelled"
            await until(lambda: not alive(pid), timeout=10, what=f"the command's shell {pid} to die")
            (call,) = editor.of_kind("tool_call")
            assert editor.tool_updates(call.tool_call_id)[-1].status == "failed"
            if terminal:
                assert editor.commands and "sleep 30" in editor.commands[0]
                await until(lambda: all(t.process.returncode is not None for t in editor.terminals.values()),
                            timeout=10, what="the editor's terminal to end")

            # the session is intact: the next prompt runs on the same history
            again = await step(conn.prompt(session_id=sid, prompt=[text_block("go on")]))
            assert again.stop_reason == "end_turn"
            assert editor.text().endswith("after the cancel")

    run(scenario())
    messages = [e["message"] for e in acp_env.entries() if e["type"] == "message"]
    # the aborted turn is saved as Escape saves it: the command's output so far, then the aborted reply
    assert [(m["role"], m.get("stopReason")) for m in messages] == [
        ("user", None), ("assistant", "toolUse"), ("toolResult", None), ("assistant", "aborted"), ("user", None),
        ("assistant", "stop")]
    assert messages[2]["isError"] is True and "started" in messages[2]["content"][0]["text"]
    request = acp_env.server.requests[1].body
    assert any("run the slow thing" in str(part) for part in request["contents"][0]["parts"])


def test_cancel_mid_tool_kills_pis_own_bash_and_keeps_the_session(acp_env: AcpEnv) -> None:
    _cancel_mid_bash(acp_env, terminal=False)


def test_cancel_mid_tool_kills_the_clients_terminal(acp_env: AcpEnv) -> None:
    _cancel_mid_bash(acp_env, terminal=True)


def test_cancel_while_the_model_streams(acp_env: AcpEnv) -> None:
    acp_env.server.add(Reply(text="word " * 400, chunk_size=5, chunk_delay=0.02), Reply(text="fine"))

    async def scenario() -> None:
        async with acp_env.connect() as (conn, editor, _process):
            sid = (await step(conn.new_session(cwd=str(acp_env.cwd), mcp_servers=[]))).session_id
            turn = asyncio.ensure_future(conn.prompt(session_id=sid, prompt=[text_block("talk")]))
            await until(lambda: editor.text(), what="the first words")
            await conn.cancel(session_id=sid)
            assert (await step(turn)).stop_reason == "cancelled"
            assert len(editor.text()) < len("word " * 400)
            assert (await step(conn.prompt(session_id=sid, prompt=[text_block("again")]))).stop_reason == "end_turn"

    run(scenario())
    roles = [e["message"]["role"] for e in acp_env.entries() if e["type"] == "message"]
    assert roles == ["user", "assistant", "user", "assistant"]


def test_cancel_withdraws_an_open_permission_question(acp_env: AcpEnv) -> None:
    (acp_env.cwd / "junk").mkdir()
    acp_env.server.add(Reply(tool_calls=[("bash", {"command": "rm -rf junk"})]), Reply(text="next"))

    async def scenario() -> None:
        async with acp_env.connect("-e", "plugin:permission_gate") as (conn, editor, _process):
            editor.hold_permissions = asyncio.Event()
            sid = (await step(conn.new_session(cwd=str(acp_env.cwd), mcp_servers=[]))).session_id
            turn = asyncio.ensure_future(conn.prompt(session_id=sid, prompt=[text_block("clean")]))
            await step(editor.permission_asked.wait())
            await conn.cancel(session_id=sid)
            assert (await step(turn)).stop_reason == "cancelled"
            editor.hold_permissions.set()  # the editor's late answer ("Yes") changes nothing
            assert (await step(conn.prompt(session_id=sid, prompt=[text_block("go on")]))).stop_reason == "end_turn"

    run(scenario())
    assert (acp_env.cwd / "junk").is_dir()
    results = [e["message"] for e in acp_env.entries() if e["type"] == "message"
               and e["message"]["role"] == "toolResult"]
    assert len(results) == 1 and results[0]["isError"] is True
