"""Class plugins (docs/plugins.md#class-plugins): an entry point naming a class gets one instance per session.

The plugin is a throwaway installed distribution (a ``*.dist-info`` next to its module, on ``sys.path``); the
sessions are the SDK's, run against the fake model server, so a tool call goes through the whole loop.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from pi_core.loader.plugins import load_plugins, register_module
from pi_core.registry import build_registry
from pi_core.sdk import create_session
from pi_core.testing.fake_server import FakeModelServer, Reply
from pi_core.testing.kit import write_fake_models
from tests.core.test_plugins import make_dist, plugin_rows, run_pi

COUNTER = '''
from pi_core import Tool, hookimpl

SEEN = []  # the test's window on the instances: (instance id, what happened to it)


class Counter:
    """Counts the calls of its tool: state on the instance, none in the module."""

    def __init__(self):
        self.count = 0
        SEEN.append((id(self), "made"))

    def _count(self, args, ctx):
        self.count += 1
        return f"count {self.count}"

    @hookimpl
    def pi_tools(self):
        return [Tool(name="count", description="Counts its calls.", parameters={"type": "object", "properties": {}},
                     execute=self._count)]

    @hookimpl
    def pi_session_shutdown(self, reason):
        SEEN.append((id(self), "shutdown " + reason))

    @hookimpl
    def pi_agent_event(self, event):
        if event.type == "agent_end":
            SEEN.append((id(self), "agent_end"))
'''


@pytest.fixture
def counter(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[int, str]]]:
    """The Counter class plugin installed as entry point ``counter``; yields its module's SEEN list."""
    site = tmp_path / "site"
    site.mkdir()
    make_dist(site, "acme-counter", "acme_counter", COUNTER, entry_name="counter", attr="Counter")
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    import acme_counter  # type: ignore[import-not-found]

    yield acme_counter.SEEN
    sys.modules.pop("acme_counter", None)


@pytest.fixture
def server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeModelServer]:
    home = tmp_path / "agent"
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(home))
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    with FakeModelServer() as fake:
        write_fake_models(home, fake)
        yield fake


def tool_texts(session: object) -> list[str]:
    return [m.content[0].text for m in session.state.messages if m.role == "toolResult"]  # type: ignore[attr-defined]


def test_a_class_entry_point_loads_as_an_installed_plugin(counter: list[tuple[int, str]]) -> None:
    plugins = load_plugins(discover_extensions=False)
    registry = build_registry(plugins)
    assert plugins.info["counter"].layer == "installed"
    assert registry.tools.owner["count"] == "counter"
    assert [what for _, what in counter] == ["made"]
    assert plugins.path_of("counter").endswith("acme_counter.py")  # sourceInfo.path: its class's module


def test_pi_plugins_lists_a_class_plugin_like_a_module_one(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    make_dist(site, "acme-counter", "acme_counter", COUNTER, entry_name="counter", attr="Counter")
    rows = plugin_rows(run_pi(["plugins", "--json"], tmp_path, site))
    assert rows["counter"]["layer"] == "installed" and rows["counter"]["tools"] == ["count"]
    assert json.dumps(rows["counter"]).count("acme-counter 1.0") == 1


def test_two_sessions_do_not_share_an_instance(counter: list[tuple[int, str]], server: FakeModelServer) -> None:
    asyncio.run(_two_sessions(counter, server))


async def _two_sessions(seen: list[tuple[int, str]], server: FakeModelServer) -> None:
    first = await create_session(model="fake/fake-model")
    second = await create_session(model="fake/fake-model")
    server.add(Reply(tool_calls=[("count", {}), ("count", {})]), Reply(text="two"),
               Reply(tool_calls=[("count", {})]), Reply(text="one"))
    await first.prompt("count twice")
    await second.prompt("count once")
    assert tool_texts(first) == ["count 1", "count 2"]
    assert tool_texts(second) == ["count 1"]
    made = [who for who, what in seen if what == "made"]
    assert len(set(made)) == 2
    ended = [who for who, what in seen if what == "agent_end"]
    assert ended == made  # each session's events reached its own instance only
    await first.dispose()
    await second.dispose()


def test_a_replaced_session_gets_a_fresh_instance_and_the_old_one_is_unregistered(
        counter: list[tuple[int, str]], server: FakeModelServer) -> None:
    asyncio.run(_replaced(counter, server))


async def _replaced(seen: list[tuple[int, str]], server: FakeModelServer) -> None:
    session = await create_session(model="fake/fake-model")
    server.add(Reply(tool_calls=[("count", {})]), Reply(text="a"), Reply(tool_calls=[("count", {})]), Reply(text="b"),
               Reply(text="c"))
    await session.prompt("count")
    old = seen[0][0]
    assert await session.new_session()
    await session.prompt("count again")
    assert tool_texts(session) == ["count 1"]  # the new session's instance counts from zero
    new = seen[-2][0]
    assert new != old and (old, "shutdown new") in seen
    assert [who for who, what in seen if what == "agent_end"] == [old, new]
    await session.dispose()
    assert seen[-1] == (new, "shutdown quit")
    before = len(seen)
    await session._session.plugins.call("pi_agent_event", event=type("E", (), {"type": "agent_end"})())
    assert len(seen) == before  # ended with its session: the hook is no longer called


def test_register_module_takes_a_class_too(counter: list[tuple[int, str]]) -> None:
    import acme_counter  # type: ignore[import-not-found]

    plugins = load_plugins(load_entry_points=False, discover_extensions=False)
    register_module(plugins, acme_counter.Counter, "embedded")
    assert build_registry(plugins).tools.owner["count"] == "embedded"


def test_a_class_whose_constructor_raises_is_a_failure_not_a_crash(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "site"
    site.mkdir()
    make_dist(site, "acme-broken", "acme_broken", "class Broken:\n    def __init__(self):\n        raise OSError('no')\n",
              entry_name="broken", attr="Broken")
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    plugins = load_plugins(discover_extensions=False)
    assert "broken" not in plugins.info
    failure = next(f for f in plugins.failures if f.name == "broken")
    assert failure.reason == "Broken() raised OSError: no" and not failure.fatal
    sys.modules.pop("acme_broken", None)


TOOLBOX = '''
from pathlib import Path

from pi_core import SlashCommand, Tool, hookimpl

MADE = []  # the test's window on the instances, in order


class Toolbox:
    """Offers the tools named in toolbox.txt (in the working directory) as it is when its session starts."""

    def __init__(self):
        self.names = Path("toolbox.txt").read_text().split()
        if "broken" in self.names:
            raise OSError("the toolbox is broken")
        MADE.append(self)
        self.number = len(MADE)

    def _tool(self, name):
        return Tool(name=name, description=f"The {name} tool.", parameters={"type": "object", "properties": {}},
                    execute=lambda args, ctx: f"{name} from instance {self.number}")

    @hookimpl
    def pi_tools(self):
        return [self._tool(name) for name in self.names]

    @hookimpl
    def pi_commands(self):
        return [SlashCommand(name=f"reload-{self.number}", description="Reloads.", handler=self._reload)]

    @hookimpl
    def pi_providers(self):
        return [self]  # serves api "toolbox" (no model uses it: the test looks at who is registered)

    api = "toolbox"

    async def _reload(self, args, ctx):
        await ctx.reload()
'''


@pytest.fixture
def toolbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The Toolbox class plugin installed as entry point ``toolbox``; yields its toolbox.txt (in the project,
    the working directory once ``server`` is set up: request ``server`` first)."""
    site = tmp_path / "site"
    site.mkdir()
    make_dist(site, "acme-toolbox", "acme_toolbox", TOOLBOX, entry_name="toolbox", attr="Toolbox")
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    listing = Path.cwd() / "toolbox.txt"
    listing.write_text("alpha shared")
    yield listing
    sys.modules.pop("acme_toolbox", None)


async def _replace(session: object, how: str) -> None:
    """Replace the SDK session's session ``how``: "new", "fork", "resume" (its own file again) or "reload" (a
    plugin command calling ``ctx.reload()``)."""
    if how == "new":
        assert await session.new_session()  # type: ignore[attr-defined]
    elif how == "fork":
        entry_id, _text = session.fork_points()[0]  # type: ignore[attr-defined]
        await session.fork(entry_id)  # type: ignore[attr-defined]
    elif how == "resume":
        assert await session.switch_session(session.state.session_file)  # type: ignore[attr-defined]
    else:
        assert await session.prompt("/reload-1") == "handled"  # type: ignore[attr-defined]


@pytest.mark.parametrize("how", ["new", "fork", "resume", "reload"])
def test_after_the_session_is_replaced_the_tools_are_the_new_instances(
        server: FakeModelServer, toolbox: Path, how: str) -> None:
    asyncio.run(_tools_follow_the_instance(server, toolbox, how))


async def _tools_follow_the_instance(server: FakeModelServer, toolbox: Path, how: str) -> None:
    session = await create_session(model="fake/fake-model", storage="disk")
    assert {"alpha", "shared"} <= set(session.state.tools)
    server.add(Reply(tool_calls=[("alpha", {})]), Reply(text="a"))
    await session.prompt("use alpha")
    toolbox.write_text("beta shared")
    await _replace(session, how)
    listed = set(session.state.tools)
    assert "alpha" not in listed and {"beta", "shared"} <= listed  # what the live instance contributes, only
    registry = session._session.registry.tools
    assert "alpha" not in registry.items and registry.owner["beta"] == "toolbox"
    assert "alpha" not in registry.by_plugin["toolbox"]
    commands = [c.name for c in session._session.command_infos()]  # RPC get_commands, ctx.get_commands()
    assert "reload-2" in commands and "reload-1" not in commands
    assert session._session.registry.providers.items["toolbox"].number == 2  # a model of api "toolbox" streams here
    server.add(Reply(tool_calls=[("beta", {}), ("shared", {}), ("alpha", {})]), Reply(text="b"))
    await session.prompt("use them")
    assert tool_texts(session)[-3:] == ["beta from instance 2", "shared from instance 2", "Tool alpha not found"]
    await session.dispose()


def test_a_tool_of_an_instance_that_could_not_be_renewed_is_withdrawn(server: FakeModelServer,
                                                                      toolbox: Path) -> None:
    asyncio.run(_not_renewed(server, toolbox))


async def _not_renewed(server: FakeModelServer, toolbox: Path) -> None:
    session = await create_session(model="fake/fake-model")
    errors = []
    session._session.subscribe(lambda event: errors.append(event) if event.type == "extension_error" else None)
    toolbox.write_text("broken")
    assert await session.new_session()
    assert not {"alpha", "shared"} & set(session.state.tools)  # the old instance is gone, and its tools with it
    assert [e.plugin for e in errors] == ["toolbox"]
    server.add(Reply(tool_calls=[("alpha", {})]), Reply(text="gone"))
    await session.prompt("use alpha")
    assert tool_texts(session) == ["Tool alpha not found"]
    await session.dispose()
