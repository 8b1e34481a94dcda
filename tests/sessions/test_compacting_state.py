"""``AgentSession.is_compacting`` (RPC ``get_state``'s ``isCompacting``, ``is_idle``) follows the compactor: true
while a manual or an automatic compaction runs, through the Python API."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from pi_core.app.startup import session_parts
from pi_core.loader.plugins import load_plugins
from pi_core.registry import build_registry
from pi_core.session import AgentSession, SessionConfig
from pi_core.sessions.manager import SessionManager
from pi_core.testing.fake_provider import FakeProvider, reply
from pi_core.types import AssistantMessageEvent, Model, Usage

MODEL = Model(id="fake-1", api="fake", provider="fake", context_window=200_000)


class HeldSummary:
    """The fake provider, with the second request (the summary) held until ``release`` is set."""

    def __init__(self, first_usage: Usage) -> None:
        answer = reply("The answer is 42, as computed.")
        answer.usage = first_usage
        self.provider = FakeProvider(answer, reply("## Goal\nSummarised."))
        self.waiting = asyncio.Event()
        self.release = asyncio.Event()

    async def stream(self, model: Model, context: Any, options: Any) -> AsyncIterator[AssistantMessageEvent]:
        if self.provider.contexts:
            self.waiting.set()
            await self.release.wait()
        async for event in self.provider.stream(model, context, options):
            yield event


def make_session(tmp_path: Path, held: HeldSummary) -> AgentSession:
    plugins = load_plugins(load_entry_points=False, discover_extensions=False)
    registry = build_registry(plugins)
    parts = session_parts(SessionManager.in_memory(tmp_path), plugins, registry, stream_fn=held.stream)
    return AgentSession(SessionConfig(cwd=tmp_path, model=MODEL), parts, plugins=plugins, registry=registry)


def test_a_manual_compaction_is_compacting_until_it_ends(tmp_path: Path) -> None:
    async def run() -> None:
        held = HeldSummary(Usage(input=1200, output=300))
        session = make_session(tmp_path, held)
        await session.prompt("What is six times seven? Explain at length.")
        assert not session.is_compacting and session.is_idle
        compacting = asyncio.ensure_future(session.compact())
        await held.waiting.wait()
        assert session.is_compacting and not session.is_idle
        held.release.set()
        result = await compacting
        assert result.summary == "## Goal\nSummarised."
        assert not session.is_compacting and session.is_idle

    asyncio.run(run())


def test_an_automatic_compaction_is_compacting_until_it_ends(tmp_path: Path) -> None:
    async def run() -> None:
        held = HeldSummary(Usage(input=190_000, output=300))  # past the window's threshold: compacted after the reply
        session = make_session(tmp_path, held)
        prompting = asyncio.ensure_future(session.prompt("What is six times seven?"))
        await held.waiting.wait()
        assert session.is_compacting and not session.is_idle
        held.release.set()
        await prompting
        assert not session.is_compacting and session.is_idle
        assert [e["type"] for e in session.store.get_branch()].count("compaction") == 1

    asyncio.run(run())
