"""What an editor shows beside the chat: the model and thinking options, pi's modes (plan mode when its plugin is
loaded), the todo tool's list as the plan, slash commands and prompt templates, and why a turn stopped."""

from __future__ import annotations

from typing import Any

from acp import text_block

from pi_core.testing.fake_server import Reply
from tests.acp.harness import AcpEnv, run, step, until


def _option(options: list[Any], option_id: str) -> Any:
    return next(getattr(o, "root", o) for o in options if getattr(o, "root", o).id == option_id)


def test_the_model_and_thinking_level_are_options(acp_env: AcpEnv) -> None:
    acp_env.server.add(Reply(text="thought about it"))

    async def scenario() -> None:
        async with acp_env.connect() as (conn, _editor, _process):
            new = await step(conn.new_session(cwd=str(acp_env.cwd), mcp_servers=[]))
            model = _option(new.config_options, "model")
            assert [c.value for c in model.options] == ["fake/fake-model", "fake/fake-think", "fake-openai/fake-gpt"]
            assert _option(new.config_options, "thinking").current_value == "off"
            changed = await step(conn.set_config_option(config_id="model", session_id=new.session_id,
                                                        value="fake/fake-think"))
            assert _option(changed.config_options, "model").current_value == "fake/fake-think"
            levels = [c.value for c in _option(changed.config_options, "thinking").options]
            assert "high" in levels
            changed = await step(conn.set_config_option(config_id="thinking", session_id=new.session_id,
                                                        value="high"))
            assert _option(changed.config_options, "thinking").current_value == "high"
            await step(conn.prompt(session_id=new.session_id, prompt=[text_block("think")]))
            try:
                await step(conn.set_config_option(config_id="model", session_id=new.session_id, value="fake/nope"))
            except Exception as err:  # noqa: BLE001 - the SDK raises RequestError
                assert "nope" in str(err) or "nope" in str(getattr(err, "data", ""))
            else:
                raise AssertionError("an unknown model was accepted")

    run(scenario())
    assert acp_env.server.requests[0].path.endswith("fake-think:streamGenerateContent") or \
        "fake-think" in acp_env.server.requests[0].path


def test_plan_mode_is_a_session_mode_when_its_plugin_is_loaded(acp_env: AcpEnv) -> None:
    acp_env.server.add(Reply(text="Plan:\n1. Look around"), Reply(text="back to normal"))

    async def scenario() -> None:
        async with acp_env.connect("-e", "plugin:plan_mode") as (conn, editor, _process):
            editor.choose = lambda options: None  # dismiss the plugin's "what next?" question
            new = await step(conn.new_session(cwd=str(acp_env.cwd), mcp_servers=[]))
            assert [m.id for m in new.modes.available_modes] == ["default", "plan"]
            assert new.modes.current_mode_id == "default"
            await step(conn.set_session_mode(session_id=new.session_id, mode_id="plan"))
            assert [u.current_mode_id for u in editor.of_kind("current_mode_update")] == ["plan"]
            await step(conn.prompt(session_id=new.session_id, prompt=[text_block("plan it")]))
            await step(conn.set_session_mode(session_id=new.session_id, mode_id="default"))
            await step(conn.prompt(session_id=new.session_id, prompt=[text_block("now do it")]))
            assert [u.current_mode_id for u in editor.of_kind("current_mode_update")] == ["plan", "default"]

    run(scenario())
    planned, normal = ({d["name"] for d in r.body["tools"][0]["functionDeclarations"]}
                       for r in acp_env.server.requests)
    assert "edit" not in planned and "write" not in planned
    assert {"edit", "write"} <= normal


def test_the_todo_tool_is_the_plan(acp_env: AcpEnv) -> None:
    acp_env.server.add(Reply(tool_calls=[("todo", {"action": "add", "text": "write tests"})]),
                       Reply(tool_calls=[("todo", {"action": "add", "text": "ship it"})]),
                       Reply(tool_calls=[("todo", {"action": "toggle", "id": 1})]),
                       Reply(text="planned"))

    async def scenario() -> None:
        async with acp_env.connect("-e", "plugin:todo") as (conn, editor, _process):
            sid = (await step(conn.new_session(cwd=str(acp_env.cwd), mcp_servers=[]))).session_id
            await step(conn.prompt(session_id=sid, prompt=[text_block("plan")]))
            plans = editor.of_kind("plan")
            assert [[(e.content, e.status) for e in p.entries] for p in plans] == [
                [("write tests", "pending")],
                [("write tests", "pending"), ("ship it", "pending")],
                [("write tests", "completed"), ("ship it", "pending")]]
            (call, *_rest) = editor.of_kind("tool_call")
            assert call.kind == "think"

    run(scenario())


def test_commands_and_prompt_templates_are_announced(acp_env: AcpEnv) -> None:
    prompts = acp_env.home / "prompts"
    prompts.mkdir()
    (prompts / "review.md").write_text("---\ndescription: Review the change\n---\nReview $1 carefully.\n")
    acp_env.server.add(Reply(text="reviewed"))

    async def scenario() -> None:
        async with acp_env.connect() as (conn, editor, _process):
            sid = (await step(conn.new_session(cwd=str(acp_env.cwd), mcp_servers=[]))).session_id
            (update,) = await until(lambda: editor.of_kind("available_commands_update"), what="the commands")
            commands = {c.name: c.description for c in update.available_commands}
            assert commands["review"] == "Review the change"
            await step(conn.prompt(session_id=sid, prompt=[text_block("/review app.py")]))

    run(scenario())
    assert "Review app.py carefully." in str(acp_env.server.requests[0].body["contents"])


def test_stop_reasons(acp_env: AcpEnv) -> None:
    acp_env.server.add(Reply(text="cut sho", stop_reason="length"), Reply(text="no", stop_reason="content_filter"),
                       Reply(status=400, error_message="the request was bad"), Reply(text="still here"))

    async def scenario() -> None:
        async with acp_env.connect() as (conn, _editor, _process):
            sid = (await step(conn.new_session(cwd=str(acp_env.cwd), mcp_servers=[]))).session_id
            first = await step(conn.prompt(session_id=sid, prompt=[text_block("long")]))
            assert first.stop_reason == "max_tokens"
            await step(conn.set_config_option(config_id="model", session_id=sid, value="fake-openai/fake-gpt"))
            second = await step(conn.prompt(session_id=sid, prompt=[text_block("bad")]))
            assert second.stop_reason == "refusal"
            try:
                await step(conn.prompt(session_id=sid, prompt=[text_block("fail")]))
            except Exception as err:  # noqa: BLE001 - the SDK raises RequestError
                assert "the request was bad" in str(err) + str(getattr(err, "data", ""))
                assert "Traceback" not in str(err) + str(getattr(err, "data", ""))
            else:
                raise AssertionError("a failed request ended the turn normally")
            # nothing lost: the failed turn is in the session and the next prompt goes on from it
            assert (await step(conn.prompt(session_id=sid, prompt=[text_block("again")]))).stop_reason == "end_turn"

    run(scenario())
    stops = [e["message"].get("stopReason") for e in acp_env.entries() if e["type"] == "message"
             and e["message"]["role"] == "assistant"]
    assert stops == ["length", "error", "error", "stop"]
