"""Project trust over ACP: opening a session in a folder with protected ``.pi`` resources asks the editor
(``session/request_permission``) before any of them loads; its answer decides, and a saved answer is kept."""

from __future__ import annotations

import json
from typing import Any

import pytest
from acp import text_block

from pi_core.testing.fake_server import Reply
from tests.acp.harness import AcpEnv, run, step, until


def _project_with_template(acp_env: AcpEnv) -> None:
    prompts = acp_env.cwd / ".pi" / "prompts"
    prompts.mkdir(parents=True)
    (prompts / "deploy.md").write_text("---\ndescription: Deploy the project\n---\nDeploy it now.\n")


def _open(acp_env: AcpEnv, answer: str | None) -> tuple[Any, set[str]]:
    async def scenario() -> tuple[Any, set[str]]:
        async with acp_env.connect() as (conn, editor, _process):
            editor.choose = lambda options: None if answer is None else next(
                o.option_id for o in options if o.name == answer)
            sid = (await step(conn.new_session(cwd=str(acp_env.cwd), mcp_servers=[]))).session_id
            (update,) = await until(lambda: editor.of_kind("available_commands_update"), what="the commands")
            await step(conn.prompt(session_id=sid, prompt=[text_block("/deploy")]))
            return editor, {c.name for c in update.available_commands}

    return run(scenario())  # type: ignore[no-any-return]


@pytest.mark.parametrize("answer", ["Trust", "Trust (this session only)"])
def test_trusting_loads_the_projects_resources(acp_env: AcpEnv, answer: str) -> None:
    _project_with_template(acp_env)
    acp_env.server.add(Reply(text="deployed"))
    editor, commands = _open(acp_env, answer)
    (asked,) = editor.permissions
    assert asked.tool_call.tool_call_id.startswith("pi-question-")
    question = editor.tool_updates(asked.tool_call.tool_call_id)[0]
    assert "Trust project folder?" in question.content[0].content.text and ".pi/prompts" in \
        question.content[0].content.text
    assert "deploy" in commands
    assert "Deploy it now." in str(acp_env.server.requests[0].body["contents"])
    saved = acp_env.home / "trust.json"
    assert saved.exists() == (answer == "Trust")


@pytest.mark.parametrize("answer", ["Do not trust", None])
def test_not_trusting_skips_them(acp_env: AcpEnv, answer: str | None) -> None:
    _project_with_template(acp_env)
    acp_env.server.add(Reply(text="what deploy?"))
    editor, commands = _open(acp_env, answer)
    assert len(editor.permissions) == 1
    assert "deploy" not in commands
    assert "Deploy it now." not in str(acp_env.server.requests[0].body["contents"])
    if answer is not None:
        assert False in json.loads((acp_env.home / "trust.json").read_text()).values()


def test_a_saved_decision_is_not_asked_again(acp_env: AcpEnv) -> None:
    _project_with_template(acp_env)
    acp_env.server.add(Reply(text="one"), Reply(text="two"))
    _open(acp_env, "Trust")
    editor, commands = _open(acp_env, "Do not trust")
    assert editor.permissions == [] and "deploy" in commands
