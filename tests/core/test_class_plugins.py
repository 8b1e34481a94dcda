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
