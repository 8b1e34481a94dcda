"""``session/load`` of a session ``pi -p`` wrote: its history replayed as updates, then the conversation goes on;
``session/list`` finds it and ``session/fork`` copies it."""

from __future__ import annotations

import subprocess

from acp import text_block

from pi_core.testing.fake_server import Reply
from tests.acp.harness import PI, AcpEnv, run, step


def _print_mode_session(acp_env: AcpEnv) -> str:
    (acp_env.cwd / "notes.txt").write_text("alpha\n")
    acp_env.server.add(Reply(thinking="Look first.", text="Reading.", tool_calls=[("read", {"path": "notes.txt"})]),
                       Reply(text="It says alpha."))
    done = subprocess.run([*PI, "-p", "what is in notes.txt?"], cwd=acp_env.cwd, env=acp_env.env(),
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert "It says alpha." in done.stdout
    (header, *_rest) = acp_env.entries()
    return str(header["id"])


def test_load_replays_a_print_mode_session_and_goes_on(acp_env: AcpEnv) -> None:
    session_id = _print_mode_session(acp_env)
    acp_env.server.add(Reply(text="Still alpha."))

    async def scenario() -> None:
        async with acp_env.connect() as (conn, editor, _process):
            listed = await step(conn.list_sessions(cwd=str(acp_env.cwd)))
            assert [s.session_id for s in listed.sessions] == [session_id]
            assert listed.sessions[0].title == "what is in notes.txt?"

            await step(conn.load_session(cwd=str(acp_env.cwd), session_id=session_id, mcp_servers=[]))
            replayed = [u for sid, u in editor.updates if sid == session_id]
            kinds = [u.session_update for u in replayed if u.session_update != "available_commands_update"]
            assert kinds == ["user_message_chunk", "agent_thought_chunk", "agent_message_chunk", "tool_call",
                             "tool_call_update", "agent_message_chunk"]
            assert editor.text("user_message_chunk") == "what is in notes.txt?"
            assert editor.text("agent_thought_chunk") == "Look first."
            (call,) = editor.of_kind("tool_call")
            assert call.kind == "read" and call.locations[0].path == str(acp_env.cwd / "notes.txt")
            (result,) = editor.of_kind("tool_call_update")
            assert result.status == "completed" and "alpha" in result.content[0].content.text
            assert editor.text() == "Reading.It says alpha."

            response = await step(conn.prompt(session_id=session_id, prompt=[text_block("and now?")]))
            assert response.stop_reason == "end_turn"
            assert editor.text().endswith("Still alpha.")

    run(scenario())
    # the model saw the whole loaded history, and the file holds one conversation
    assert "It says alpha." in str(acp_env.server.requests[-1].body["contents"])
    (path,) = acp_env.session_files()
    roles = [e["message"]["role"] for e in acp_env.entries(path) if e["type"] == "message"]
    assert roles == ["user", "assistant", "toolResult", "assistant", "user", "assistant"]


def test_an_unknown_session_cannot_be_loaded(acp_env: AcpEnv) -> None:
    async def scenario() -> None:
        async with acp_env.connect() as (conn, _editor, _process):
            try:
                await step(conn.load_session(cwd=str(acp_env.cwd), session_id="0000-none", mcp_servers=[]))
            except Exception as err:  # noqa: BLE001 - the SDK raises RequestError
                assert getattr(err, "code", None) == -32002 and "No session 0000-none" in str(err)
            else:
                raise AssertionError("an unknown session loaded")
            # the server still serves
            assert (await step(conn.new_session(cwd=str(acp_env.cwd), mcp_servers=[]))).session_id

    run(scenario())


def test_fork_copies_the_history_into_a_new_session(acp_env: AcpEnv) -> None:
    session_id = _print_mode_session(acp_env)
    acp_env.server.add(Reply(text="From the fork."))

    async def scenario() -> None:
        async with acp_env.connect() as (conn, _editor, _process):
            forked = await step(conn.fork_session(session_id=session_id, cwd=str(acp_env.cwd), mcp_servers=[]))
            assert forked.session_id != session_id
            response = await step(conn.prompt(session_id=forked.session_id, prompt=[text_block("go on")]))
            assert response.stop_reason == "end_turn"

    run(scenario())
    assert "It says alpha." in str(acp_env.server.requests[-1].body["contents"])
    original, fork = sorted(acp_env.session_files(), key=lambda p: len(acp_env.entries(p)))
    assert len([e for e in acp_env.entries(original) if e["type"] == "message"]) == 4
    assert len([e for e in acp_env.entries(fork) if e["type"] == "message"]) == 6
