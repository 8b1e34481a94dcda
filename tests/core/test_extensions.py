"""Plugin capabilities at run time (docs/plugins.md#the-extension-context): lifecycle hooks, commands, tools."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from pi_core import BeforeAgentStart, InputResult, SlashCommand, Tool, hookimpl
from pi_core.app.startup import session_parts
from pi_core.plugins import load_plugins, register_module
from pi_core.registry import build_registry
from pi_core.session import AgentSession, SessionConfig
from pi_core.sessions.manager import SessionManager
from pi_core.testing.fake_provider import FakeProvider, reply
from pi_core.types import Model

MODEL = Model(id="fake-1", api="fake", provider="fake")
EMPTY = {"type": "object", "properties": {}}


def make_session(plugin: Any, provider: FakeProvider, tmp_path: Path, active: list[str]) -> AgentSession:
    plugins = load_plugins(load_entry_points=False, discover_extensions=False)
    register_module(plugins, plugin, "ext")
    registry = build_registry(plugins)
    tools = registry.tools.items
    config = SessionConfig(cwd=tmp_path, model=MODEL, tools=[tools[n] for n in active], all_tools=dict(tools))
    parts = session_parts(SessionManager.in_memory(tmp_path), plugins, registry, stream_fn=provider.stream)
    return AgentSession(config, parts, plugins=plugins, registry=registry)


def test_tool_unlocks_other_tool_from_next_turn(tmp_path: Path) -> None:
    def unlock(args: dict, ctx: Any) -> str:
        ctx.pi.set_active_tools(ctx.pi.get_active_tools() + ["secret"])
        return "unlocked"

    plugin = SimpleNamespace(pi_tools=hookimpl(lambda: [
        Tool(name="unlock", description="Unlock the secret tool.", parameters=EMPTY, execute=unlock),
        Tool(name="secret", description="A hidden tool.", parameters=EMPTY, execute=lambda a, c: "42"),
    ]))
    provider = FakeProvider(reply(tool_calls=[("unlock", {})]), reply(tool_calls=[("secret", {})]), reply("done"))
    session = make_session(plugin, provider, tmp_path, ["unlock"])
    asyncio.run(session.prompt("go"))
    assert [t.name for t in provider.contexts[0].tools] == ["unlock"]
    assert [t.name for t in provider.contexts[1].tools] == ["unlock", "secret"]
    assert provider.contexts[2].messages[-1].text() == "42"


def test_input_transform_before_agent_start_and_events(tmp_path: Path) -> None:
    seen: list[str] = []

    class Plugin:
        @staticmethod
        @hookimpl
        def pi_input(ctx: Any, text: str, source: str) -> InputResult:
            return InputResult(action="transform", text=text.upper())

        @staticmethod
        @hookimpl
        def pi_before_agent_start(ctx: Any, prompt: str, system_prompt: str) -> BeforeAgentStart:
            return BeforeAgentStart(message={"customType": "note", "content": "remember", "display": False},
                                    system_prompt=system_prompt + "\nExtra rule.")

        @staticmethod
        @hookimpl
        def pi_agent_event(ctx: Any, event: Any) -> None:
            seen.append(event.type)

    provider = FakeProvider(reply("ok"))
    session = make_session(Plugin, provider, tmp_path, [])
    session.agent.state.system_prompt = "Base."
    asyncio.run(session.prompt("hello"))
    sent = provider.contexts[0]
    assert sent.messages[0].text() == "HELLO"
    assert sent.system_prompt == "Base.\nExtra rule."
    assert session.agent.state.system_prompt == "Base."  # restored after the run
    assert seen[0] == "agent_start" and seen[-2:] == ["agent_end", "agent_settled"]


def test_handled_input_and_slash_command_send_nothing(tmp_path: Path) -> None:
    calls: list[str] = []

    class Plugin:
        @staticmethod
        @hookimpl
        def pi_commands() -> list[SlashCommand]:
            return [SlashCommand("greet", "Say hi", lambda args, ctx: calls.append(args))]

        @staticmethod
        @hookimpl
        def pi_input(ctx: Any, text: str, source: str) -> InputResult | None:
            return InputResult(action="handled") if text == "swallow" else None

    provider = FakeProvider()
    session = make_session(Plugin, provider, tmp_path, [])
    asyncio.run(session.prompt("/greet bob"))
    asyncio.run(session.prompt("swallow"))
    assert calls == ["bob"] and provider.contexts == []


def test_raising_hook_is_reported_and_run_continues(tmp_path: Path) -> None:
    class Plugin:
        @staticmethod
        @hookimpl
        def pi_session_start(ctx: Any, reason: str) -> None:
            raise RuntimeError("broken start")

    provider = FakeProvider(reply("fine"))
    session = make_session(Plugin, provider, tmp_path, [])
    errors: list[Any] = []
    session.subscribe(lambda e: errors.append(e) if e.type == "extension_error" else None)

    async def scenario() -> None:
        await session.start()
        await session.prompt("hi")

    asyncio.run(scenario())
    assert errors and errors[0].error == "broken start" and errors[0].event == "session_start"
    assert session.last_assistant().text() == "fine"


def test_ui_defaults_without_a_ui(tmp_path: Path) -> None:
    answers: list[Any] = []

    async def ask(args: dict, ctx: Any) -> str:
        answers.append(await ctx.pi.ui.confirm("Really?"))
        answers.append(await ctx.pi.ui.select("Pick", ["a", "b"]))
        return "asked"

    plugin = SimpleNamespace(pi_tools=hookimpl(lambda: [
        Tool(name="ask", description="Ask the user.", parameters=EMPTY, execute=ask)]))
    provider = FakeProvider(reply(tool_calls=[("ask", {})]), reply("done"))
    session = make_session(plugin, provider, tmp_path, ["ask"])
    asyncio.run(session.prompt("go"))
    assert answers == [False, None]


def test_extension_error_printed_in_print_mode(tmp_path: Path) -> None:
    (tmp_path / "noisy.py").write_text(
        "from pi_core import hookimpl\n\n@hookimpl\ndef pi_session_start(ctx, reason):\n    raise ValueError('nope')\n")
    from pi_core.testing.fake_server import FakeModelServer, Reply
    from pi_core.testing.pi_home import write_models

    with FakeModelServer() as server:
        server.add(Reply(text="still answers"))
        home = tmp_path / "agent"
        write_models(home, server.base_url_for("openai-completions"), "openai-completions")
        result = subprocess.run(
            [sys.executable, "-c", "from pi_core.app.cli import cli; cli()", "--provider", "fake", "--model",
             "fake-model", "-e", "noisy.py", "--no-session", "-p", "hi"],
            capture_output=True, text=True, cwd=tmp_path, timeout=60,
            env={"PI_CODING_AGENT_DIR": str(home), "PATH": "/usr/bin:/bin"}, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "still answers\n"
    assert "Extension error (noisy, pi_session_start): ValueError: nope" in result.stderr
