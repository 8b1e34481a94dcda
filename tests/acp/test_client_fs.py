"""With the editor's ``fs`` capability, read and edit see its unsaved buffers and write into them; the edit's
update carries the diff. A company ``read`` plugin still wins over the client's."""

from __future__ import annotations

from pathlib import Path

from acp import text_block

from pi_core.testing.fake_server import Reply
from tests.acp.harness import AcpEnv, run, step

ON_DISK = "def greet():\n    return 'hello'\n"
UNSAVED = "def greet():\n    return 'hello, editor'\n"


def test_read_and_edit_go_through_the_editors_buffers(acp_env: AcpEnv) -> None:
    source = acp_env.cwd / "app.py"
    source.write_text(ON_DISK)
    acp_env.server.add(
        Reply(tool_calls=[("read", {"path": "app.py"})]),
        Reply(tool_calls=[("edit", {"path": "app.py", "edits": [
            {"oldText": "'hello, editor'", "newText": "'hi, editor'"}]})]),
        Reply(text="Changed."),
    )

    async def scenario() -> None:
        async with acp_env.connect(fs=True) as (conn, editor, _process):
            editor.buffers[str(source)] = UNSAVED
            sid = (await step(conn.new_session(cwd=str(acp_env.cwd), mcp_servers=[]))).session_id
            response = await step(conn.prompt(session_id=sid, prompt=[text_block("make it hi")]))
            assert response.stop_reason == "end_turn"

            assert str(source) in editor.reads
            read_call, edit_call = editor.of_kind("tool_call")
            assert (read_call.kind, edit_call.kind) == ("read", "edit")
            read_done = editor.tool_updates(read_call.tool_call_id)[-1]
            assert "hello, editor" in read_done.content[0].content.text  # the buffer, not the disk

            # the edit lands in the editor's buffer, the user saves it
            assert editor.writes == [(str(source), UNSAVED.replace("hello, editor", "hi, editor"))]
            edit_done = editor.tool_updates(edit_call.tool_call_id)[-1]
            assert edit_done.status == "completed"
            diff = edit_done.content[0]
            assert diff.type == "diff" and diff.path == str(source)
            assert diff.old_text == UNSAVED and diff.new_text == UNSAVED.replace("hello, editor", "hi, editor")

    run(scenario())
    assert source.read_text() == ON_DISK
    tool_results = [e["message"] for e in acp_env.entries()
                    if e["type"] == "message" and e["message"]["role"] == "toolResult"]
    assert [r["isError"] for r in tool_results] == [False, False]


def test_write_makes_a_new_file_through_the_editor(acp_env: AcpEnv) -> None:
    target = acp_env.cwd / "src" / "new.py"
    acp_env.server.add(Reply(tool_calls=[("write", {"path": "src/new.py", "content": "x = 1\n"})]),
                       Reply(text="Written."))

    async def scenario() -> None:
        async with acp_env.connect(fs=True) as (conn, editor, _process):
            sid = (await step(conn.new_session(cwd=str(acp_env.cwd), mcp_servers=[]))).session_id
            await step(conn.prompt(session_id=sid, prompt=[text_block("write it")]))
            assert editor.writes == [(str(target), "x = 1\n")]
            (call,) = editor.of_kind("tool_call")
            assert call.kind == "edit" and call.locations[0].path == str(target)
            done = editor.tool_updates(call.tool_call_id)[-1]
            assert done.status == "completed"
            assert done.content[0].type == "diff" and done.content[0].old_text is None
            assert done.content[0].new_text == "x = 1\n"

    run(scenario())
    assert target.parent.is_dir()  # pi made the folder; the editor holds the text


def test_a_company_read_plugin_wins_over_the_editors_read(acp_env: AcpEnv, tmp_path: Path) -> None:
    plugin = tmp_path / "company_read.py"
    plugin.write_text(
        "from pi_core import hookimpl\n"
        "from pi_core.tools import Tool, ToolResult\n"
        "from pi_core.types import TextContent\n\n"
        "def run(args, ctx):\n"
        "    return ToolResult(content=[TextContent(text='company read of ' + args['path'])])\n\n"
        "@hookimpl\n"
        "def pi_tools():\n"
        "    return [Tool(name='read', description='Company read', execute=run,\n"
        "                 parameters={'type': 'object', 'properties': {'path': {'type': 'string'}}})]\n")
    (acp_env.cwd / "app.py").write_text(ON_DISK)
    acp_env.server.add(Reply(tool_calls=[("read", {"path": "app.py"})]), Reply(text="ok"))

    async def scenario() -> None:
        async with acp_env.connect("-e", str(plugin), fs=True) as (conn, editor, _process):
            editor.buffers[str(acp_env.cwd / "app.py")] = UNSAVED
            sid = (await step(conn.new_session(cwd=str(acp_env.cwd), mcp_servers=[]))).session_id
            await step(conn.prompt(session_id=sid, prompt=[text_block("read it")]))
            assert editor.reads == []
            (call,) = editor.of_kind("tool_call")
            assert editor.tool_updates(call.tool_call_id)[-1].content[0].content.text == "company read of app.py"

    run(scenario())
