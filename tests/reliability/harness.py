"""Drive the real built-in tools through ``run_agent_loop`` with a scripted provider (no network, no CLI)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any, Literal

from pi_core.events import AgentEvent
from pi_core.loader.plugins import load_plugins
from pi_core.loop import AgentContext, LoopConfig, run_agent_loop
from pi_core.registry import build_registry
from pi_core.signals import AbortSignal
from pi_core.testing.fake_provider import FakeProvider, reply
from pi_core.toolkit.arguments import PI_ARGUMENTS
from pi_core.tools import Tool
from pi_core.types import (
    AgentMessage,
    AssistantMessage,
    Model,
    TextContent,
    ToolResultMessage,
    UserMessage,
)

MODEL = Model(id="fake-1", api="fake", provider="fake")
BUILTIN = ["read", "bash", "edit", "write", "grep", "find", "ls"]


@cache
def builtin_tools() -> dict[str, Tool]:
    registry = build_registry(load_plugins(discover_extensions=False))
    return {name: registry.tools.items[name] for name in BUILTIN}


def run_tool_calls(calls: list[tuple[str, dict[str, Any]]], cwd: Path,
                   mode: Literal["parallel", "sequential"] = "parallel",
                   replace: Sequence[Tool] = ()) -> list[AgentMessage]:
    """One assistant turn making ``calls``, then a final "ok"; returns the run's new messages.
    ``replace``: tools used instead of the built-ins of the same name."""
    provider = FakeProvider(reply(tool_calls=calls), reply("ok"))
    config = LoopConfig(model=MODEL, stream_fn=provider.stream, cwd=cwd, tool_execution=mode, arguments=PI_ARGUMENTS)
    tools = {**builtin_tools(), **{tool.name: tool for tool in replace}}
    context = AgentContext("", [], list(tools.values()))

    async def emit(event: AgentEvent) -> None:
        return None

    prompt = UserMessage(content=[TextContent(text="go")])
    return asyncio.run(run_agent_loop([prompt], context, config, emit, AbortSignal()))


def tool_results(messages: list[AgentMessage]) -> list[ToolResultMessage]:
    return [m for m in messages if isinstance(m, ToolResultMessage)]


def check_every_call_answered(messages: list[AgentMessage], count: int) -> list[ToolResultMessage]:
    """The loop ran to the final "ok" and each of the ``count`` calls got exactly one result."""
    assistants = [m for m in messages if isinstance(m, AssistantMessage)]
    assert assistants[-1].text() == "ok", assistants[-1]
    calls = assistants[0].tool_calls()
    results = tool_results(messages)
    assert sorted(r.tool_call_id for r in results) == sorted(c.id for c in calls)
    assert len(results) == count
    for result in results:
        assert result.content, result
    return results
