"""pi declares the ``roots`` capability and answers ``roots/list`` with the project directory, as Pi 1.6.0 does,
so servers that honour roots (server-filesystem) keep to the project; a change of roots is announced with
``notifications/roots/list_changed`` (issue 38)."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from pi_plugins.mcp.config import load_config
from pi_plugins.mcp.manager import McpManager

from pi_core.testing.fake_server import Reply
from pi_core.testing.runner import PiRunner

from .conftest import SERVERS, npm_server, tool_results, write_mcp


def events(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def probe(events_file: Path) -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(SERVERS / "roots_probe.py"), str(events_file)],
            "exposure": "direct"}


def test_the_filesystem_server_keeps_to_the_project_under_pi(pi: PiRunner) -> None:
    # started with the whole test folder, the server narrows itself to the roots pi names: the project
    outside = pi.cwd.parent / "outside.txt"
    outside.write_text("not part of the project\n")
    (pi.cwd / "inside.txt").write_text("part of the project\n")
    write_mcp(pi.home / "mcp.json", {"filesystem": npm_server("mcp-server-filesystem", str(pi.cwd.parent),
                                                              exposure="direct")})
    pi.server.add(
        Reply(tool_calls=[("mcp__filesystem__read_text_file", {"path": str(pi.cwd / "inside.txt")})]),
        Reply(tool_calls=[("mcp__filesystem__read_text_file", {"path": str(outside)})]),
        Reply(text="done"),
    )
    result = pi.run("-p", "read both", timeout=120)
    assert result.returncode == 0, result.stderr
    inside = tool_results(pi.server.requests[1].body)[-1]
    assert not inside["is_error"] and "part of the project" in inside["text"]
    refused = tool_results(pi.server.requests[2].body)[-1]
    assert refused["is_error"] and "Access denied - path outside allowed directories" in refused["text"]
    assert "not part of the project" not in refused["text"]


def test_a_server_sees_the_roots_capability_and_the_project_uri(pi: PiRunner) -> None:
    seen = pi.cwd.parent / "events.jsonl"
    write_mcp(pi.home / "mcp.json", {"probe": probe(seen)})
    pi.server.add(Reply(tool_calls=[("mcp__probe__roots", {})]), Reply(text="done"))
    result = pi.run("-p", "which roots?", timeout=120)
    assert result.returncode == 0, result.stderr
    project = {"uri": pi.cwd.resolve().as_uri(), "name": pi.cwd.name}
    assert json.loads(tool_results(pi.server.requests[1].body)[-1]["text"]) == [project]
    assert events(seen) == [{"event": "capabilities", "roots": {"listChanged": True}},
                            {"event": "roots", "roots": [project]}]


class _Ctx:
    """What the manager needs of a session to publish tools."""

    has_ui = False

    def __init__(self) -> None:
        self.tools: dict[str, Any] = {}

    def add_tools(self, tools: list[Any]) -> list[str]:
        self.tools.update((t.name, t) for t in tools)
        return [t.name for t in tools]

    def remove_tools(self, names: list[str]) -> None:
        for name in names:
            self.tools.pop(name, None)

    def get_active_tools(self) -> list[str]:
        return list(self.tools)

    def set_active_tools(self, names: list[str]) -> None:
        pass

    def get_all_tools(self) -> list[Any]:
        return list(self.tools.values())


def test_a_directory_change_is_announced_and_the_server_lists_the_new_roots(tmp_path: Path) -> None:
    first, second, extra = (tmp_path / name for name in ("first", "second", "extra"))
    for folder in (first, second, extra):
        folder.mkdir()
    seen = tmp_path / "events.jsonl"
    write_mcp(tmp_path / "agent" / "mcp.json", {"probe": probe(seen)})

    async def run() -> None:
        manager = McpManager(agent_dir=tmp_path / "agent", cwd=first)
        manager.start(_Ctx(), load_config(tmp_path / "agent", first))  # type: ignore[arg-type]
        try:
            server = manager.find("probe")
            assert server is not None and server.ready is not None
            await server.ready
            assert server.connection is not None and server.connection.state == "connected"
            await manager.set_roots(first)  # unchanged: nothing is sent
            await manager.set_roots(second, extra=[extra])
            for _ in range(100):
                if len(events(seen)) >= 2:
                    break
                await asyncio.sleep(0.05)
        finally:
            await manager.shutdown()

    asyncio.run(run())
    assert events(seen) == [{"event": "list_changed"},
                            {"event": "roots", "roots": [{"uri": second.as_uri(), "name": "second"},
                                                         {"uri": extra.as_uri(), "name": "extra"}]}]


def test_an_editors_session_elsewhere_gives_its_servers_that_folder_as_root(tmp_path: Path) -> None:
    # ACP: the editor opens a session in another folder and passes the probe; the probe's root is that folder,
    # and disabling the editor's server from /mcp holds for the session (there is no file to save it in)
    from acp import schema, text_block

    from pi_core.testing.fake_server import FakeModelServer
    from tests.acp.harness import AcpEnv, run, step

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    seen = tmp_path / "events.jsonl"
    with FakeModelServer() as fake:
        env = AcpEnv(fake, tmp_path)
        fake.add(Reply(tool_calls=[("mcp__probe__roots", {})]), Reply(text="done"))
        probe_server = schema.McpServerStdio(name="probe", command=sys.executable,
                                             args=[str(SERVERS / "roots_probe.py"), str(seen)], env=[])

        async def scenario() -> None:
            async with env.connect() as (conn, editor, _process):
                sid = (await step(conn.new_session(cwd=str(elsewhere), mcp_servers=[probe_server]))).session_id
                await step(conn.prompt(session_id=sid, prompt=[text_block("which roots?")]))
                await step(conn.prompt(session_id=sid, prompt=[text_block("/mcp disable probe")]))
                for _ in range(100):  # the notice is sent beside the prompt's answer
                    if "Disabled MCP server" in editor.text():
                        break
                    await asyncio.sleep(0.05)
                assert 'Disabled MCP server "probe" (for this session): disabled.' in editor.text()

        run(scenario())
    assert events(seen)[-1] == {"event": "roots", "roots": [{"uri": elsewhere.resolve().as_uri(),
                                                             "name": "elsewhere"}]}
    assert not (env.home / "mcp.json").exists()
