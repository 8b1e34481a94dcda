"""``pi --mode acp`` answering an editor: sessions, a prompt with tool calls and the updates it streams."""

from __future__ import annotations

from acp import text_block

from pi_core.testing.fake_server import Reply
from tests.acp.harness import PI, AcpEnv, run, step


def test_a_prompt_with_a_tool_call_streams_its_updates(acp_env: AcpEnv) -> None:
    (acp_env.cwd / "notes.txt").write_text("alpha\nbeta\n")
    acp_env.server.add(
        Reply(thinking="Let me look.", text="Reading it.", tool_calls=[("read", {"path": "notes.txt"})]),
        Reply(text="The file says alpha and beta."),
    )

    async def scenario() -> None:
        async with acp_env.connect() as (conn, editor, _process):
            new = await step(conn.new_session(cwd=str(acp_env.cwd), mcp_servers=[]))
            assert new.session_id
            model = next(getattr(o, "root", o) for o in new.config_options if getattr(o, "root", o).id == "model")
            assert model.current_value == "fake/fake-model"
            response = await step(conn.prompt(session_id=new.session_id, prompt=[text_block("What is in notes.txt?")]))
            assert response.stop_reason == "end_turn"

            assert "Let me look." in editor.text("agent_thought_chunk")
            assert editor.text().startswith("Reading it.") and editor.text().endswith("alpha and beta.")
            (start,) = editor.of_kind("tool_call")
            assert start.kind == "read" and start.title == "read notes.txt"
            assert start.locations[0].path == str(acp_env.cwd / "notes.txt")
            assert start.raw_input == {"path": "notes.txt"}
            statuses = [u.status for u in editor.tool_updates(start.tool_call_id) if u.status]
            assert statuses == ["pending", "in_progress", "completed"]
            done = editor.tool_updates(start.tool_call_id)[-1]
            assert "alpha\nbeta" in done.content[0].content.text
            # the order a client renders: thought and text, then the call, then the answer
            kinds = editor.kinds(new.session_id)
            assert kinds.index("agent_thought_chunk") < kinds.index("tool_call") < len(kinds) - 1
            assert "available_commands_update" in kinds

    run(scenario())
    entries = acp_env.entries()
    assert [e["message"]["role"] for e in entries if e["type"] == "message"] == \
        ["user", "assistant", "toolResult", "assistant"]


def test_an_unknown_session_is_a_json_rpc_error(acp_env: AcpEnv) -> None:
    async def scenario() -> None:
        async with acp_env.connect() as (conn, _editor, _process):
            try:
                await step(conn.prompt(session_id="nope", prompt=[text_block("hi")]))
            except Exception as err:  # noqa: BLE001 - the SDK raises RequestError
                assert getattr(err, "code", None) == -32002
                assert "Unknown session nope" in str(err)
            else:
                raise AssertionError("a prompt to an unknown session succeeded")

    run(scenario())


def test_pi_acp_takes_pis_options_after_its_name(acp_env: AcpEnv) -> None:
    acp_env.server.add(Reply(text="hello from the thinker"))

    async def scenario() -> None:
        async with acp_env.connect(command=[*PI, "acp", "--model", "fake/fake-think"]) as (conn, editor, _process):
            new = await step(conn.new_session(cwd=str(acp_env.cwd), mcp_servers=[]))
            model = next(getattr(o, "root", o) for o in new.config_options if getattr(o, "root", o).id == "model")
            assert model.current_value == "fake/fake-think"
            await step(conn.prompt(session_id=new.session_id, prompt=[text_block("hi")]))
            assert editor.text() == "hello from the thinker"

    run(scenario())
    assert "fake-think" in acp_env.server.requests[0].path


def test_images_and_embedded_files_reach_the_model(acp_env: AcpEnv) -> None:
    from acp import helpers

    acp_env.server.add(Reply(text="seen"))
    pixel = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
    path = acp_env.cwd / "draft.py"

    async def scenario() -> None:
        async with acp_env.connect() as (conn, _editor, _process):
            sid = (await step(conn.new_session(cwd=str(acp_env.cwd), mcp_servers=[]))).session_id
            blocks = [text_block("look at these"), helpers.image_block(pixel, "image/png"),
                      helpers.resource_block(helpers.embedded_text_resource(path.as_uri(), "x = 'unsaved'\n"))]
            assert (await step(conn.prompt(session_id=sid, prompt=blocks))).stop_reason == "end_turn"

    run(scenario())
    parts = acp_env.server.requests[0].body["contents"][0]["parts"]
    text = "".join(p.get("text", "") for p in parts)
    assert f'<file name="{path}">\nx = \'unsaved\'\n\n</file>' in text and text.endswith("look at these")
    assert any(p.get("inlineData", {}).get("mimeType") == "image/png" for p in parts)
