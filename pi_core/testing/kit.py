"""A testing kit for plugin authors: load a plugin, run a tool as the agent loop would, script a conversation.

    loaded = load_plugin("my_pack.word_count")          # module, dotted name or path to a .py file
    result, is_error = run_tool(loaded.registry, "word_count", {"path": "a.txt"}, cwd=tmp_path)
    convo = run_conversation(loaded.registry, [reply(tool_calls=[("word_count", {"path": "a.txt"})]),
                                               reply("done")], "count a.txt", cwd=tmp_path)
    assert convo.tool_results[0].is_error is False

``run_tool`` goes through ``pi_core.loop.execute_tool_calls``: ``prepare_arguments``, Pi's coercion and
validation texts, execution in a worker thread, and a raised exception turned into the error text the
model reads. The pytest fixtures (``pi_plugin``, ``pi_run_tool``, ``pi_conversation``) wrap these with
``tmp_path`` as the working directory.
"""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypedDict, Unpack

import pytest

from pi_core.loader.plugins import (
    PluginSet,
    load_plugins,
    register_file,
    register_module,
)
from pi_core.registry import Registry, build_registry
from pi_core.toolkit.arguments import PI_ARGUMENTS
from pi_core.tools import Tool, ToolResult, ToolSettings

if TYPE_CHECKING:
    import subprocess

    from pi_core.agent import Agent
    from pi_core.events import AgentEvent
    from pi_core.hookspecs.entries import SessionEntry
    from pi_core.hookspecs.results import SystemPromptOptions
    from pi_core.session.parts import LoadedResources
    from pi_core.testing.fake_provider import FakeProvider
    from pi_core.testing.fake_server import FakeModelServer
    from pi_core.types import AgentMessage, AssistantMessage

FAKE_MODEL_ID = "fake-model"


@dataclass
class LoadedPlugins:
    plugins: PluginSet
    registry: Registry

    def tool(self, name: str) -> Tool:
        try:
            tool: Tool = self.registry.tools.items[name]  # Registry.tools is Contributions[Any] in the kernel
        except KeyError:
            raise KeyError(f"no tool {name!r}; registered: {', '.join(self.registry.tools.items)}") from None
        return tool


def load_plugin(*targets: ModuleType | str | Path, builtins: bool = False) -> LoadedPlugins:
    """A PluginSet with each target registered (module, dotted module name, or ``.py`` path) + its Registry.

    ``builtins=True`` loads every installed entry point first (built-ins included), so an override
    can be checked against what it replaces. A target that fails to load raises, naming the reason.
    """
    plugins = load_plugins(load_entry_points=builtins, discover_extensions=False)
    for target in targets:
        if isinstance(target, Path) or (isinstance(target, str) and target.endswith(".py")):
            path = Path(target)
            register_file(plugins, path)
            name = path.stem
        else:
            module = importlib.import_module(target) if isinstance(target, str) else target
            name = module.__name__.rsplit(".", 1)[-1]
            register_module(plugins, module, name)
        failed = [f for f in plugins.failures if f.name == name]
        if failed:
            raise RuntimeError(f"plugin {name!r} failed to load: {failed[0].reason}")
    registry = build_registry(plugins)
    if registry.failures:
        raise RuntimeError("plugin hooks failed: " + "; ".join(f.reason for f in registry.failures))
    return LoadedPlugins(plugins, registry)


def _tools_of(source: Registry | LoadedPlugins | Iterable[Tool]) -> list[Tool]:
    if isinstance(source, LoadedPlugins):
        source = source.registry
    if isinstance(source, Registry):
        return list(source.tools.items.values())
    return list(source)


def _fake_model() -> Any:
    from pi_core.types import Model

    return Model(id=FAKE_MODEL_ID, name="Fake", api="fake", provider="fake", input=["text", "image"])


@dataclass
class StaticPromptSource:
    """A session's prompt source for tests and embedders: a fixed system prompt and fixed resources."""

    resources: LoadedResources | None = None
    text: str = ""

    def build(self, tools: list[Tool], options: SystemPromptOptions | None = None) -> str:
        return self.text + ("".join(f"\n\n<{k}>\n{v}\n</{k}>" for k, v in options.sections.items())
                            if options is not None else "")

    def options(self, tools: list[Tool]) -> SystemPromptOptions:
        from pi_core.hookspecs.results import SystemPromptOptions

        return SystemPromptOptions(selected_tools=[t.name for t in tools])

    def reload(self) -> None:
        return None

    def add_resource_paths(self, owner: str, skills: Sequence[str | Path], prompts: Sequence[str | Path],
                           themes: Sequence[str | Path]) -> None:
        return None


def _tool_settings(extras: dict[str, Any] | None) -> ToolSettings:
    """``extras`` takes the keys 0.1 passed to tools: ``model``, ``shell_path``, ``shell_command_prefix``,
    ``auto_resize_images``."""
    extras = extras or {}
    return ToolSettings(shell_path=extras.get("shell_path"), shell_command_prefix=extras.get("shell_command_prefix"),
                        auto_resize_images=extras.get("auto_resize_images"))


async def run_tool_async(source: Registry | LoadedPlugins | Iterable[Tool], name: str, args: dict[str, Any],  # open: the tool's arguments, JSON as a model would send them
                         cwd: str | Path, *, extras: dict[str, Any] | None = None) -> tuple[ToolResult, bool]:  # open: values passed by key to ToolContext.extras
    """Run one tool call exactly as the loop does; returns (result, is_error)."""
    from pi_core.loop import AgentContext, LoopConfig, execute_tool_calls
    from pi_core.signals import AbortSignal
    from pi_core.types import AssistantMessage, ToolCall

    call = ToolCall(id="call_kit_1", name=name, arguments=args)
    assistant = AssistantMessage(content=[call], stop_reason="toolUse")
    context = AgentContext(system_prompt="", messages=[assistant], tools=_tools_of(source))

    async def no_stream(*_: Any) -> Any:
        raise AssertionError("run_tool never calls the model")

    config = LoopConfig(model=(extras or {}).get("model") or _fake_model(), stream_fn=no_stream,  # type: ignore[arg-type]
                        cwd=Path(cwd), tool_settings=_tool_settings(extras), arguments=PI_ARGUMENTS)

    async def ignore(_: Any) -> None:
        return None

    messages, _ = await execute_tool_calls(context, assistant, [call], config, ignore, AbortSignal())
    message = messages[0]
    return ToolResult(content=list(message.content), details=message.details), message.is_error


def run_tool(source: Registry | LoadedPlugins | Iterable[Tool], name: str, args: dict[str, Any],  # open: the tool's arguments, JSON as a model would send them
             cwd: str | Path, *, extras: dict[str, Any] | None = None) -> tuple[ToolResult, bool]:  # open: values passed by key to ToolContext.extras
    """Synchronous ``run_tool_async`` (for tests that are not ``async``)."""
    return asyncio.run(run_tool_async(source, name, args, cwd, extras=extras))


def result_text(result: ToolResult) -> str:
    """All text blocks of a result, joined by newlines."""
    return "\n".join(getattr(block, "text", "") for block in result.content if getattr(block, "type", "") == "text")


@dataclass
class Conversation:
    agent: Agent
    provider: FakeProvider
    events: list[AgentEvent] = field(default_factory=list)

    @property
    def messages(self) -> list[AgentMessage]:
        return list(self.agent.state.messages)

    @property
    def tool_results(self) -> list[AgentMessage]:
        return [m for m in self.messages if getattr(m, "role", "") == "toolResult"]

    def sent_tool_names(self, request: int = 0) -> list[str]:
        """Tool names the model was offered in request ``request``."""
        return [t.name for t in self.provider.contexts[request].tools or []]


class ConversationOptions(TypedDict, total=False):
    """``run_conversation``'s keywords, passed on to ``run_conversation_async``."""

    system_prompt: str
    extras: dict[str, Any] | None  # open: values passed by key to ToolContext.extras


async def run_conversation_async(source: Registry | LoadedPlugins | Iterable[Tool], replies: Sequence[AssistantMessage],
                                 prompt: str, cwd: str | Path, *, system_prompt: str = "",
                                 extras: dict[str, Any] | None = None) -> Conversation:  # open: values passed by key to ToolContext.extras
    """Prompt an ``Agent`` whose model is a ``FakeProvider`` replaying ``replies`` (``fake_provider.reply``)."""
    from pi_core.agent import Agent
    from pi_core.testing.fake_provider import FakeProvider

    provider = FakeProvider(*replies)
    agent = Agent(stream_fn=provider.stream, system_prompt=system_prompt,
                  model=(extras or {}).get("model") or _fake_model(), tools=_tools_of(source), cwd=Path(cwd),
                  tool_settings=_tool_settings(extras), arguments=PI_ARGUMENTS)
    convo = Conversation(agent, provider)
    def record(event: Any, _signal: Any = None) -> None:
        convo.events.append(event)

    agent.subscribe(record)
    await agent.prompt(prompt)
    return convo


def run_conversation(source: Registry | LoadedPlugins | Iterable[Tool], replies: Sequence[AssistantMessage],
                     prompt: str, cwd: str | Path, **kwargs: Unpack[ConversationOptions]) -> Conversation:
    return asyncio.run(run_conversation_async(source, replies, prompt, cwd, **kwargs))


# --- the real ``pi`` command against FakeModelServer ------------------------------------------------


def write_fake_models(agent_dir: str | Path, server: FakeModelServer, api: str = "google-generative-ai") -> Path:
    """Write ``models.json`` so ``pi --provider fake --model fake-model`` talks to ``server`` on ``api``.

    The Google wire is the default because pi speaks it without importing a vendor SDK (fast start).
    """
    import json

    home = Path(agent_dir)
    home.mkdir(parents=True, exist_ok=True)
    models = {"providers": {"fake": {
        "baseUrl": server.base_url_for(api), "api": api, "apiKey": "test-key",
        "models": [{"id": FAKE_MODEL_ID, "name": "Fake Model", "reasoning": False, "input": ["text"],
                    "contextWindow": 100000, "maxTokens": 4096}],
    }}}
    path = home / "models.json"
    path.write_text(json.dumps(models), encoding="utf-8")
    return path


def session_entries(*raw: dict[str, Any]) -> list[SessionEntry]:  # open: session entries as Pi's JSON
    """Typed session entries (``pi_core.hookspecs.entries``) from entry dicts as a session file holds them, for
    testing code that reads ``ctx.session_manager``; an entry without an ``id`` gets its position as one."""
    from pi_core.hookspecs.entries import entry_from_json

    return [entry_from_json({"id": str(n), **entry}) for n, entry in enumerate(raw)]


def run_pi(*args: str, agent_dir: str | Path, cwd: str | Path, pi: str | Path | None = None,
           env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run the ``pi`` command (``pi`` = its path; default: this interpreter's pi_core.app.cli) and capture it.

    Provider keys are removed from the environment; ``PI_CODING_AGENT_DIR`` is ``agent_dir``.
    """
    import os
    import subprocess
    import sys

    base = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    full_env = {**base, "PI_CODING_AGENT_DIR": str(agent_dir), **(env or {})}
    command = [str(pi)] if pi else [sys.executable, "-c", "from pi_core.app.cli import cli; cli()"]
    return subprocess.run([*command, *args], capture_output=True, text=True, cwd=cwd, env=full_env,
                          timeout=timeout, stdin=subprocess.DEVNULL, check=False)


# --- pytest fixtures --------------------------------------------------------------------------------


@pytest.fixture
def pi_plugin() -> Callable[..., LoadedPlugins]:
    """``pi_plugin(module_or_path, ...)`` -> LoadedPlugins (``.plugins``, ``.registry``, ``.tool(name)``)."""
    return load_plugin


@pytest.fixture
def pi_run_tool(tmp_path: Path) -> Callable[..., tuple[ToolResult, bool]]:
    """``pi_run_tool(registry, name, args)`` runs in ``tmp_path`` (pass ``cwd=`` to change it)."""

    def run(source: Any, name: str, args: dict[str, Any], cwd: str | Path | None = None,
            **kwargs: Any) -> tuple[ToolResult, bool]:
        return run_tool(source, name, args, cwd if cwd is not None else tmp_path, **kwargs)

    return run


@pytest.fixture
def pi_conversation(tmp_path: Path) -> Callable[..., Conversation]:
    """``pi_conversation(registry, [reply(...), ...], "prompt")`` runs in ``tmp_path``."""

    def run(source: Any, replies: Sequence[Any], prompt: str, cwd: str | Path | None = None,
            **kwargs: Any) -> Conversation:
        return run_conversation(source, replies, prompt, cwd if cwd is not None else tmp_path, **kwargs)

    return run
