"""A class plugin's UI contributions after the session is replaced (/new, /resume, /fork, /reload): the
transcript draws with the live instance's message, entry and tool renderers, and its shortcuts and slash
commands are the ones bound (docs/plugins.md#class-plugins)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from pi_core import Renderer, Shortcut, SlashCommand, Tool, hookimpl
from pi_core.loader.plugins import load_plugins, register_module
from pi_core.registry import build_registry
from pi_core.render import EntryRenderer, MessageRenderer
from pi_core.sessions.manager import SessionManager
from pi_core.testing.fake_provider import FakeProvider, reply
from tests.interactive.harness import Harness, make_session

ENTER, DOWN, F7 = "\r", "\x1b[B", "\x1b[18~"


class Stamp:
    """Everything it draws says which instance drew it; each instance has a command of its own number."""

    made = 0  # the test's window on the instances

    def __init__(self) -> None:
        Stamp.made += 1
        self.number = Stamp.made

    @hookimpl
    def pi_commands(self) -> list[SlashCommand]:
        return [SlashCommand("stamp", "Stamps the transcript.", self._stamp),
                SlashCommand(f"only-{self.number}", "This instance's own command.",
                             lambda args, ctx: ctx.ui.notify(f"only-{self.number} ran"))]

    def _stamp(self, args: str, ctx: Any) -> None:
        ctx.send_message("stamp", "plain stamp", display=True)
        ctx.append_entry("stamp-entry", {})

    @hookimpl
    def pi_shortcuts(self) -> list[Shortcut]:
        return [Shortcut("f7", "Says which instance", lambda ctx: ctx.ui.notify(f"f7 from instance {self.number}"))]

    @hookimpl
    def pi_message_renderers(self) -> list[MessageRenderer]:
        return [MessageRenderer("stamp", lambda message, options, theme: f"message by instance {self.number}")]

    @hookimpl
    def pi_entry_renderers(self) -> list[EntryRenderer]:
        return [EntryRenderer("stamp-entry", lambda entry, options, theme: f"entry by instance {self.number}")]

    @hookimpl
    def pi_tools(self) -> list[Tool]:
        return [Tool(name="stamp_tool", description="Stamps.", parameters={"type": "object", "properties": {}},
                     execute=lambda args, ctx: "stamped")]

    @hookimpl
    def pi_renderers(self) -> list[Renderer]:
        return [Renderer("stamp_tool", lambda args: f"tool call by instance {self.number}")]


async def _stamps(h: Harness, number: int) -> None:
    """/stamp, F7 and a stamp_tool call, each drawn by instance ``number``; its own command runs."""
    h.send("/stamp" + ENTER)
    await h.wait_for(lambda: f"message by instance {number}" in h.screen()
                     and f"entry by instance {number}" in h.screen())
    h.send(F7)
    await h.wait_for(lambda: f"f7 from instance {number}" in h.screen())
    h.send("stamp it" + ENTER)
    await h.wait_for(lambda: f"tool call by instance {number}" in h.screen() and not h.ui.busy)
    h.send(f"/only-{number}" + ENTER)
    await h.wait_for(lambda: f"only-{number} ran" in h.screen())
    assert [name for name in h.ui.commands if name.startswith("only-")] == [f"only-{number}"]


async def _replace(h: Harness, how: str) -> int:
    """Replace the session ``how``; returns the number of the instance now live."""
    if how == "resume":  # back to the first session, from a new one
        first = str(h.session.store.session_file)
        h.send("/new" + ENTER)
        await h.wait_for(lambda: "New session started" in h.screen())
        h.send("/resume" + ENTER)
        await h.wait_for(lambda: h.ui.panel is not None and h.ui.panel.items)
        rows = [str(row.info.path) for row in h.ui.panel.items]
        h.send(DOWN * rows.index(first) + ENTER)
        await h.wait_for(lambda: "Resumed" in h.screen())
        assert str(h.session.store.session_file) == first
        assert "message by instance 3" in h.screen()  # the transcript drawn again, by the live instance
        return 3  # /new made the second
    elif how == "fork":
        h.send("/fork" + ENTER)
        await h.wait_for(lambda: h.ui.panel is not None)
        h.send(ENTER)
        await h.wait_for(lambda: "Forked to a new session" in h.screen())
        h.ui.buffer.reset()
        assert "message by instance 2" in h.screen()  # the transcript drawn again, by the live instance
    else:
        h.send(f"/{how}" + ENTER)
        await h.wait_for(lambda: ("New session started" if how == "new" else "Reloaded") in h.screen())
    return 2


@pytest.mark.parametrize("how", ["new", "resume", "fork", "reload"])
def test_the_transcript_draws_with_the_live_instances_renderers(tmp_path: Path, pipe: Any, how: str) -> None:
    Stamp.made = 0
    plugins = load_plugins(load_entry_points=False, discover_extensions=False)
    register_module(plugins, Stamp, "stamp")
    tool = build_registry(plugins).tools.items["stamp_tool"]
    turns = [reply(tool_calls=[("stamp_tool", {})]), reply("done")]
    session = make_session(FakeProvider(*turns, *turns), tmp_path, tools=[tool], plugins=plugins,
                           store=SessionManager.create(tmp_path, tmp_path / "sessions"))

    async def main() -> None:
        h = Harness(session, pipe)
        await h.start()
        await _stamps(h, 1)
        await _stamps(h, await _replace(h, how))
        assert await h.quit() == 0

    asyncio.run(main())
