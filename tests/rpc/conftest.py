"""Harness for RPC tests: an AgentSession over a FakeProvider, served by ``run_rpc_mode`` in a thread
and driven through the same ``RpcClient`` that talks to a ``pi --mode rpc`` subprocess."""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from pi_core.app.startup import session_parts
from pi_core.loader.plugins import load_plugins, register_module
from pi_core.models.registry import ModelRegistry, ModelSources
from pi_core.modes.rpc import run_rpc_mode
from pi_core.modes.rpc.client import RpcClient
from pi_core.registry import build_registry
from pi_core.session import AgentSession, SessionConfig
from pi_core.sessions.manager import SessionManager
from pi_core.testing.fake_provider import FakeProvider
from pi_core.testing.kit import StaticPromptSource
from pi_core.tools import Tool, ToolContext, ToolResult
from pi_core.types import Model

FAKE = Model(id="fake-1", name="Fake One", api="fake", provider="fake", context_window=100_000)
FAKE_REASONING = Model(id="fake-think", name="Fake Thinker", api="fake", provider="fake", reasoning=True,
                       context_window=200_000)
OTHER = Model(id="other-1", api="fake", provider="other")  # no key: never "available"


class Gate:
    """A tool that blocks until released (or aborted), so a test can act while a tool runs."""

    def __init__(self) -> None:
        self.started = threading.Event()
        self.release = threading.Event()
        self.calls: list[str] = []

    def tool(self) -> Tool:
        async def execute(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
            self.calls.append(args["value"])
            self.started.set()
            while not self.release.is_set():
                if ctx.signal.aborted:
                    raise RuntimeError("Operation aborted")
                await asyncio.sleep(0.01)
            return ToolResult.text(f"gate: {args['value']}")

        schema = {"type": "object", "properties": {"value": {"type": "string"}}, "required": ["value"]}
        return Tool(name="gate", description="Wait for the test to release it.", parameters=schema,
                    execute=execute)


class InProcessPi:
    """``run_rpc_mode`` on a thread of its own, connected to an RpcClient through two OS pipes."""

    def __init__(self, session: AgentSession, registry: ModelRegistry) -> None:
        self.session = session
        to_pi_r, to_pi_w = os.pipe()
        from_pi_r, from_pi_w = os.pipe()
        self.exit_code: int | None = None
        self.error: BaseException | None = None

        def serve() -> None:
            try:
                with os.fdopen(from_pi_w, "wb") as out:
                    self.exit_code = asyncio.run(run_rpc_mode(session, stdin=to_pi_r, stdout=out,
                                                              model_registry=registry))
            except BaseException as err:  # noqa: BLE001 - re-raised in the test thread by close()
                self.error = err
            finally:
                os.close(to_pi_r)

        self.thread = threading.Thread(target=serve, name="rpc-mode", daemon=True)
        self.thread.start()
        self.client = RpcClient.connect(os.fdopen(to_pi_w, "wb"), os.fdopen(from_pi_r, "rb"))

    def close(self, timeout: float = 30) -> int | None:
        self.client.stop()
        self.thread.join(timeout)
        assert not self.thread.is_alive(), "run_rpc_mode did not return after EOF"
        if self.error is not None:
            raise self.error
        return self.exit_code


class Rig:
    """Builds sessions for one test: ``rig.start(replies...)`` returns the client; ``rig.pi`` the server."""

    def __init__(self, tmp_path: Path) -> None:
        self.tmp_path = tmp_path
        self.cwd = tmp_path / "project"
        self.cwd.mkdir()
        self.session_dir = tmp_path / "sessions"
        self.gate = Gate()
        self.provider = FakeProvider()
        self.running: list[InProcessPi] = []

    def registry(self, models: list[Model] | None = None) -> ModelRegistry:
        registry = ModelRegistry(ModelSources(builtin=models or [FAKE, FAKE_REASONING, OTHER]))
        registry.set_runtime_key("fake", "test-key")
        return registry

    def start(self, *replies: Any, model: Model | None = FAKE, persist: bool = True,
              tools: list[Tool] | None = None, registry: ModelRegistry | None = None,
              delay: float = 0.0, plugin_modules: dict[str, object] | None = None,
              setup: Callable[[AgentSession], None] | None = None, resources: Any = None) -> RpcClient:
        self.provider.replies.extend(replies)
        self.provider.delay = delay
        plugins = load_plugins(load_entry_points=False, discover_extensions=False)
        for name, module in (plugin_modules or {}).items():
            register_module(plugins, module, name)
        active = tools if tools is not None else [self.gate.tool()]
        store = SessionManager.create(self.cwd, self.session_dir) if persist else SessionManager.in_memory(self.cwd)
        registry_ = build_registry(plugins)
        session = AgentSession(
            SessionConfig(cwd=self.cwd, model=model, tools=active, all_tools={t.name: t for t in active},
                          api_key="test-key"),
            session_parts(store, plugins, registry_, stream_fn=self.provider.stream,
                          prompt=StaticPromptSource(resources) if resources is not None else None),
            plugins=plugins, registry=registry_)
        if setup is not None:
            setup(session)
        pi = InProcessPi(session, registry or self.registry())
        self.running.append(pi)
        return pi.client

    @property
    def pi(self) -> InProcessPi:
        """The most recently started server."""
        return self.running[-1]

    def session_files(self) -> list[Path]:
        return sorted(self.session_dir.glob("*.jsonl")) if self.session_dir.exists() else []

    def close(self) -> None:
        self.gate.release.set()
        for pi in self.running:
            pi.close()


@pytest.fixture
def rig(tmp_path: Path) -> Iterator[Rig]:
    rig = Rig(tmp_path)
    yield rig
    rig.close()
