"""Test harness: an AgentSession on the in-process FakeProvider, driven through prompt_toolkit pipe input.

The scrollback goes to a recording rich console (``Harness.screen()``), the live part to a
DummyOutput. ``wait_for`` polls a condition with a generous limit: it waits, it does not time.
"""

from __future__ import annotations

import asyncio
import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pi_plugins.interactive.app import InteractiveApp
from pi_plugins.interactive.header import StartupInfo
from prompt_toolkit.output import DummyOutput
from rich.console import Console

from pi_core.app.startup import session_parts
from pi_core.loader.plugins import PluginSet
from pi_core.registry import build_registry
from pi_core.session import AgentSession, SessionConfig
from pi_core.sessions.manager import SessionManager
from pi_core.testing.fake_provider import FakeProvider
from pi_core.testing.kit import StaticPromptSource
from pi_core.tools import Tool
from pi_core.types import Model

MODEL = Model(id="fake-1", name="Fake One", api="fake", provider="fake", context_window=100_000)
MODEL_2 = Model(id="fake-2", name="Fake Two", api="fake", provider="fake", reasoning=True)


class FakeModels:
    """The slice of ModelRegistry that the session's ops use."""

    def available_models(self) -> list[Model]:
        return [MODEL, MODEL_2]

    def find(self, provider: str, model_id: str) -> Model | None:
        return next((m for m in self.available_models() if (m.provider, m.id) == (provider, model_id)), None)

    def has_auth(self, provider: str) -> bool:
        return True

    def api_key_for(self, model: Model) -> str:
        return "test-key"


def make_session(provider: FakeProvider, tmp_path: Path, tools: list[Tool] = (),  # type: ignore[assignment]
                 plugins: PluginSet | None = None, store: Any = None, settings: Any = None,
                 resources: Any = None, expand_input: Any = None) -> AgentSession:
    from pi_core.loader.plugins import load_plugins

    plugins = plugins or load_plugins(load_entry_points=False, discover_extensions=False)
    registry = build_registry(plugins)
    registry.providers.items["fake"] = provider
    config = SessionConfig(cwd=tmp_path, model=MODEL, tools=list(tools), all_tools={t.name: t for t in tools})
    parts = session_parts(store or SessionManager.in_memory(tmp_path), plugins, registry,
                          models=FakeModels(), settings=settings, expand_input=expand_input,  # type: ignore[arg-type]
                          prompt=StaticPromptSource(resources) if resources is not None else None)
    return AgentSession(config, parts, plugins=plugins, registry=registry)


class Harness:
    def __init__(self, session: AgentSession, pipe: Any, *, quiet_startup: bool = False) -> None:
        self.session = session
        self.pipe = pipe
        self.console = Console(record=True, file=io.StringIO(), width=100, color_system=None)
        self.ui = InteractiveApp(session, header=StartupInfo(version="test"), console=self.console,
                                 input=pipe, output=DummyOutput(), quiet_startup=quiet_startup)
        self.task: asyncio.Task[int] | None = None

    async def start(self, **kwargs: Any) -> None:
        self.task = asyncio.create_task(self.ui.run(**kwargs))
        await self.wait_for(lambda: self.ui.app.is_running)

    def send(self, text: str) -> None:
        self.pipe.send_text(text)

    def screen(self) -> str:
        return self.console.export_text(clear=False)

    async def wait_for(self, check: Callable[[], Any], limit: float = 10.0) -> None:
        steps = int(limit / 0.01)
        for _ in range(steps):
            if check():
                return
            await asyncio.sleep(0.01)
        raise AssertionError(f"condition never held; scrollback so far:\n{self.screen()}")

    async def next_render(self) -> None:
        """Wait for the app to draw once more (the editor reloads its history on a redraw)."""
        drawn = asyncio.Event()

        def on_render(app: Any) -> None:
            self.ui.app.after_render -= on_render
            drawn.set()

        self.ui.app.after_render += on_render
        self.ui.app.invalidate()
        await asyncio.wait_for(drawn.wait(), 10)

    async def quit(self) -> int:
        self.ui.buffer.reset()
        self.send("/quit\r")
        assert self.task is not None
        return await asyncio.wait_for(self.task, 10)
