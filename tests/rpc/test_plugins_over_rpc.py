"""Plugin features reached through RPC: slash commands, the input hook, lifecycle hooks, get_commands, scoped models."""

from __future__ import annotations

import asyncio
import threading
import types
from pathlib import Path
from typing import Any

import pytest

from pi_core import InputResult, SlashCommand, hookimpl
from pi_core.models.resolution import ScopedModel
from pi_core.modes.rpc.client import RpcError
from pi_core.resources import Resources
from pi_core.resources.diagnostics import SourceInfo
from pi_core.resources.skills import Skill
from pi_core.resources.templates import PromptTemplate
from pi_core.testing.fake_provider import reply
from pi_core.tools import Tool
from tests.rpc.conftest import FAKE, FAKE_REASONING, Rig


def plugin(log: list[str]) -> types.SimpleNamespace:
    async def greet(args: str, ctx: Any) -> None:
        log.append(f"greet:{args}")
        name = await ctx.ui.input("Who?", "a name")
        log.append(f"asked:{name}")

    class Hooks:
        @hookimpl
        def pi_commands(self) -> list[SlashCommand]:
            return [SlashCommand(name="greet", description="Say hello", handler=greet)]

        @hookimpl
        def pi_input(self, ctx: Any, text: str, source: str) -> InputResult | None:
            log.append(f"input:{source}:{text}")
            if text == "swallow me":
                return InputResult(action="handled")
            if text.startswith("shout "):
                return InputResult(action="transform", text=text.removeprefix("shout ").upper())
            return None

        @hookimpl
        def pi_session_start(self, ctx: Any, reason: str) -> None:
            log.append(f"start:{reason}")

        @hookimpl
        def pi_session_shutdown(self, ctx: Any, reason: str) -> None:
            log.append(f"shutdown:{reason}")

    return Hooks()


def test_plugin_command_runs_and_asks_through_the_client(rig: Rig) -> None:
    log: list[str] = []
    client = rig.start(plugin_modules={"greeter": plugin(log)})

    def answer(event: dict) -> None:
        if event.get("type") == "extension_ui_request" and event["method"] == "input":
            client.respond_ui(event["id"], value="Ada")

    client.on_event(answer)
    response = client.send({"id": "g", "type": "prompt", "message": "/greet  world "})
    assert response == {"id": "g", "type": "response", "command": "prompt", "success": True,
                        "data": {"disposition": "handled"}}
    assert log == ["start:startup", "greet:world", "asked:Ada"]
    assert rig.provider.contexts == []  # handled by the command: nothing went to the model
    with pytest.raises(RpcError, match=r'Extension command "/greet" cannot be queued\. Use prompt\(\) or '
                                       r"execute the command when not streaming\."):
        client.steer("/greet again")
    client.close_stdin()
    rig.pi.close()
    assert log[-1] == "shutdown:quit"


def test_input_hook_sees_rpc_source_and_can_swallow_or_transform(rig: Rig) -> None:
    log: list[str] = []
    client = rig.start(reply("heard"), plugin_modules={"greeter": plugin(log)})
    client.prompt("swallow me")
    assert rig.provider.contexts == []
    client.prompt_and_wait("shout be loud")
    assert rig.provider.contexts[0].messages[-1].text() == "BE LOUD"
    assert "input:rpc:swallow me" in log


def test_session_replacement_runs_lifecycle_hooks(rig: Rig) -> None:
    log: list[str] = []
    client = rig.start(reply("one"), plugin_modules={"greeter": plugin(log)})
    client.prompt_and_wait("hello")
    first = client.get_state()["sessionFile"]
    client.new_session()
    client.switch_session(first)
    entry = client.get_fork_messages()[0]["entryId"]
    client.fork(entry)
    assert [e for e in log if e.startswith(("start", "shutdown"))] == [
        "start:startup", "shutdown:new", "start:new", "shutdown:resume", "start:resume", "shutdown:fork",
        "start:fork"]


def test_get_commands_lists_plugin_commands_then_templates_then_skills(rig: Rig, tmp_path: Path) -> None:
    info = SourceInfo(path=tmp_path / "fix.md", source="local", scope="project", base_dir=tmp_path)
    skill_info = SourceInfo(path=tmp_path / "s" / "SKILL.md", source="auto", scope="user")
    resources = Resources(
        templates=[PromptTemplate(name="fix-tests", description="Fix failing tests", content="Fix them",
                                  file_path=tmp_path / "fix.md", source_info=info)],
        skills=[Skill(name="search", description="Web search", file_path=tmp_path / "s" / "SKILL.md",
                      base_dir=tmp_path / "s", source_info=skill_info)],
    )

    client = rig.start(plugin_modules={"greeter": plugin([])}, resources=resources)
    commands = client.get_commands()
    assert [(c["name"], c["source"]) for c in commands] == [
        ("greet", "extension"), ("fix-tests", "prompt"), ("skill:search", "skill")]
    assert commands[0]["description"] == "Say hello" and commands[0]["sourceInfo"]["scope"] == "temporary"
    assert commands[1]["sourceInfo"] == {"path": str(tmp_path / "fix.md"), "source": "local", "scope": "project",
                                         "origin": "top-level", "baseDir": str(tmp_path)}
    assert commands[2]["description"] == "Web search" and commands[2]["sourceInfo"]["source"] == "auto"


def test_cycle_model_over_a_scope_applies_its_thinking_level(rig: Rig) -> None:
    def setup(session: Any) -> None:
        session.config.scoped_models = [ScopedModel(FAKE), ScopedModel(FAKE_REASONING, "high")]

    client = rig.start(setup=setup)
    first = client.cycle_model()
    assert first["model"]["id"] == "fake-think" and first["thinkingLevel"] == "high" and first["isScoped"] is True
    second = client.cycle_model()
    assert second["model"]["id"] == FAKE.id and second["thinkingLevel"] == "off"


def test_refused_prompt_is_not_mistaken_for_accepted_by_another_runs_events(rig: Rig) -> None:
    """While run A streams, prompt B's preflight (an input hook that waits for A's tool) sees A's
    message_start events; B must still get its own answer: the refusal."""
    tool_ran = threading.Event()

    class WaitForTool:
        @hookimpl
        async def pi_input(self, ctx: Any, text: str, source: str) -> None:
            if text == "B":
                while not tool_ran.is_set():
                    await asyncio.sleep(0.01)
                await asyncio.sleep(0.05)  # A's tool result and next assistant message start meanwhile

    def echo(args: dict[str, Any], ctx: Any) -> str:
        tool_ran.set()
        return "echoed"

    tool = Tool(name="echo", description="Echo.", parameters={"type": "object"}, execute=echo)
    client = rig.start(reply(tool_calls=[("echo", {})]), reply("A done"), tools=[tool], delay=0.1,
                       plugin_modules={"slow": WaitForTool()})
    client.prompt("A")
    response = client.send({"id": "b", "type": "prompt", "message": "B"})
    assert response["success"] is False and response["error"].startswith("Agent is already processing.")
    client.wait_for_event("agent_end")
    assert [r for r in client.responses if r.get("id") == "b"] == [response]
