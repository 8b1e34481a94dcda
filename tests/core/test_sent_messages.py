"""``ctx.send_user_message`` through the Python API: content lists as Pi sends them, and messages sent from
``agent_end`` / ``turn_end`` continuing the run they were sent in (Pi's "more work?" rule)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from pi_core import InputResult, SlashCommand, hookimpl
from pi_core.app.startup import session_parts
from pi_core.events import AgentEvent
from pi_core.extension import ExtensionContext
from pi_core.plugins import load_plugins, register_module
from pi_core.registry import build_registry
from pi_core.session import AgentSession, SessionConfig
from pi_core.sessions.manager import SessionManager
from pi_core.testing.fake_provider import FakeProvider, reply
from pi_core.types import ImageContent, Model, TextContent, UserMessage

MODEL = Model(id="fake-1", api="fake", provider="fake", input=["text", "image"])
PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="


def make_session(plugin: Any, provider: FakeProvider, tmp_path: Path) -> AgentSession:
    plugins = load_plugins(load_entry_points=False, discover_extensions=False)
    register_module(plugins, plugin, "ext")
    registry = build_registry(plugins)
    parts = session_parts(SessionManager.in_memory(tmp_path), plugins, registry, stream_fn=provider.stream)
    return AgentSession(SessionConfig(cwd=tmp_path, model=MODEL), parts, plugins=plugins, registry=registry)


def user_texts(provider: FakeProvider, request: int) -> list[str]:
    return [m.text() for m in provider.contexts[request].messages if isinstance(m, UserMessage)]


def test_a_content_list_becomes_one_text_block_then_its_images(tmp_path: Path) -> None:
    image = ImageContent(data=PIXEL, mime_type="image/png")

    class Plugin:
        @staticmethod
        @hookimpl
        def pi_commands() -> list[SlashCommand]:
            return [SlashCommand("both", "text and an image", lambda args, ctx: ctx.send_user_message(
                [TextContent(text="look at"), image, TextContent(text="this picture")]))]

    provider = FakeProvider(reply("a pixel"))
    session = make_session(Plugin, provider, tmp_path)

    async def run() -> str:
        outcome = await session.prompt("/both")
        assert not session.is_idle, "a message being sent counts as work (wait_for_idle waits for its run)"
        await session.wait_for_idle()
        return outcome

    assert asyncio.run(run()) == "handled"
    sent = provider.contexts[0].messages[-1]
    assert isinstance(sent, UserMessage)
    assert [block.type for block in sent.content] == ["text", "image"]  # Pi 1.6.0: texts joined, images after
    assert sent.text() == "look at\nthis picture"


def test_messages_sent_from_turn_end_and_agent_end_continue_the_same_run(tmp_path: Path) -> None:
    events: list[str] = []
    sent: list[str] = []

    class Plugin:
        @staticmethod
        @hookimpl
        async def pi_input(ctx: ExtensionContext, text: str, source: str) -> InputResult | None:
            if source == "extension":
                await asyncio.sleep(0.2)  # a slow input hook: the run must wait for it, not race it
                return InputResult(action="transform", text=f"{text} (checked)")
            return None

        @staticmethod
        @hookimpl
        def pi_agent_event(ctx: ExtensionContext, event: AgentEvent) -> None:
            events.append(event.type)
            if event.type == "turn_end" and not sent:
                sent.append("steer")
                ctx.send_user_message("steer this way", deliver_as="steer")
            elif event.type == "agent_end" and len(sent) == 1:
                sent.append("followUp")
                ctx.send_user_message("and then this", deliver_as="followUp")

    provider = FakeProvider(reply("first"), reply("steered"), reply("followed"))
    session = make_session(Plugin, provider, tmp_path)
    assert asyncio.run(session.prompt("go")) == "started"
    assert len(provider.contexts) == 3, "both messages were answered before prompt returned"
    assert user_texts(provider, 1)[-1] == "steer this way (checked)"
    assert user_texts(provider, 2)[-1] == "and then this (checked)"
    assert events.count("agent_settled") == 1, "one run, settled once"
    assert session.is_idle


def test_a_message_sent_from_agent_settled_starts_its_own_run(tmp_path: Path) -> None:
    class Plugin:
        sent = False

        @staticmethod
        @hookimpl
        def pi_agent_event(ctx: ExtensionContext, event: AgentEvent) -> None:
            if event.type == "agent_settled" and not Plugin.sent:
                Plugin.sent = True
                ctx.send_user_message("next task")

    provider = FakeProvider(reply("first"), reply("second"))
    session = make_session(Plugin, provider, tmp_path)

    async def run() -> None:
        await session.prompt("go")
        await session.wait_for_idle()

    asyncio.run(run())
    assert [user_texts(provider, i)[-1] for i in range(2)] == ["go", "next task"]


def test_a_custom_message_sent_while_idle_is_announced_to_the_modes_not_to_plugins(tmp_path: Path) -> None:
    heard: list[str] = []

    class Plugin:
        @staticmethod
        @hookimpl
        def pi_commands() -> list[SlashCommand]:
            return [SlashCommand("note", "a custom message", lambda args, ctx: ctx.send_message("note", args))]

        @staticmethod
        @hookimpl
        def pi_agent_event(ctx: ExtensionContext, event: AgentEvent) -> None:
            heard.append(event.type)

    session = make_session(Plugin, FakeProvider(), tmp_path)
    seen: list[AgentEvent] = []
    session.subscribe(seen.append)
    assert asyncio.run(session.prompt("/note saved")) == "handled"
    assert [e.type for e in seen] == ["message_start", "message_end"]
    assert {(e.message.role, e.message.customType, e.message.content) for e in seen} == {("custom", "note", "saved")}
    assert heard == []  # Pi tells the modes only; a plugin reacting to message_end cannot loop on its own message
    assert session.store.get_entries()[-1]["type"] == "custom_message"
