"""``pi mcp add|remove|list``: entries written in Pi's format, removed again, and checked with ``--json`` (issue 18)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pi_plugins.mcp.commands import mcp_command

from pi_core.testing.runner import PiRunner

from .conftest import BIN, write_mcp


@pytest.fixture
def home(pi: PiRunner, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(pi.home))
    monkeypatch.chdir(pi.cwd)
    return pi.home


def mcp(*args: str) -> int:
    return int(mcp_command.main(list(args), prog_name="pi mcp"))


def test_add_writes_stdio_and_http_entries_and_remove_takes_them_out(home: Path, pi: PiRunner,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    write_mcp(home / "mcp.json", {}, theme="kept")  # other content of the file survives every edit
    assert mcp("add", "time", "--env", "TZ=UTC", "--exposure", "direct", "--",
               str(BIN / "mcp-server-time"), "--local-timezone", "UTC") == 0
    assert mcp("add", "docs", "--url", "https://example.com/mcp", "--bearer-token-env-var", "DOCS_TOKEN",
               "--header", "X-Team=core", "--description", "Product docs") == 0
    out = capsys.readouterr().out
    assert f'Added global MCP server "time" in {home / "mcp.json"}.\nCheck it with: pi mcp list\n' in out
    assert 'Added global MCP server "docs"' in out and "If it requires sign-in" not in out  # it sends its own token
    document = json.loads((home / "mcp.json").read_text())
    assert document["theme"] == "kept"
    assert document["mcpServers"] == {
        "time": {"command": str(BIN / "mcp-server-time"), "args": ["--local-timezone", "UTC"],
                 "env": {"TZ": "UTC"}, "exposure": "direct"},
        "docs": {"url": "https://example.com/mcp", "headers": {"X-Team": "core",
                                                                "Authorization": "Bearer ${DOCS_TOKEN}"},
                 "description": "Product docs"},
    }
    assert mcp("add", "time", "--", "uvx", "mcp-server-time") == 0
    assert 'Replaced global MCP server "time"' in capsys.readouterr().out

    assert mcp("add", "-l", "local", "--url", "http://127.0.0.1:9/mcp") == 0
    out = capsys.readouterr().out
    assert f"The project is not trusted, so {pi.cwd / '.pi' / 'mcp.json'} is ignored until you start pi" in out
    assert "Check it with: pi mcp list. If it requires sign-in: pi mcp login local" in out

    assert mcp("remove", "docs") == 0
    assert capsys.readouterr().out == f'Removed global MCP server "docs" from {home / "mcp.json"}.\n'
    assert set(json.loads((home / "mcp.json").read_text())["mcpServers"]) == {"time"}
    assert mcp("remove", "local") == 1
    assert f"It is defined in {pi.cwd / '.pi' / 'mcp.json'}; use --local." in capsys.readouterr().err


@pytest.mark.parametrize(("args", "error"), [
    (("add", "x"), "Usage: pi mcp add <server> [options] (--url <url> | -- <command> [args...])"),
    (("add", "x", "--url", "https://h/mcp", "--", "cmd"), "Usage: pi mcp add"),
    (("add", "x", "--env", "A=1", "--url", "https://h/mcp"), "--env only applies to stdio servers."),
    (("add", "x", "--header", "A=1", "--", "cmd"), "--header only applies to HTTP servers (--url)."),
    (("add", "x", "--header", "novalue", "--url", "https://h/mcp"), '--header expects KEY=VALUE, got "novalue".'),
    (("add", "x", "--exposure", "visible", "--", "cmd"), 'server "x": exposure must be one of'),
    (("add", "bad name", "--", "cmd"), 'invalid server name "bad name"'),
    (("add", "x", "--bogus", "--", "cmd"), 'Unknown option --bogus.\nUse "pi mcp --help" for usage.'),
    (("remove", "nothing"), 'No global MCP server named "nothing" in '),
])
def test_bad_input_is_refused_and_the_file_left_alone(home: Path, capsys: pytest.CaptureFixture[str],
                                                      args: tuple[str, ...], error: str) -> None:
    write_mcp(home / "mcp.json", {"keep": {"command": "x"}})
    before = (home / "mcp.json").read_text()
    assert mcp(*args) == 1
    assert error in capsys.readouterr().err
    assert (home / "mcp.json").read_text() == before


def test_list_json_connects_reports_and_fails_on_an_invalid_entry(pi: PiRunner) -> None:
    write_mcp(pi.home / "mcp.json", {
        "time": {"command": str(BIN / "mcp-server-time"), "args": ["--local-timezone", "UTC"],
                 "toolExposure": {"convert_*": "hidden"}},
        "off": {"command": "/nonexistent/server", "enabled": False},
        "old": {"type": "sse", "url": "http://127.0.0.1:9/sse"},
    })
    listed = pi.run("mcp", "list", "--json")
    assert listed.returncode == 1, listed.stderr  # the invalid entry
    report = json.loads(listed.stdout)
    time_server, off = report["servers"]
    assert time_server["name"] == "time" and time_server["state"] == "connected"
    assert time_server["tools"] == ["get_current_time", "convert_time"]
    assert time_server["exposure"] == "codemode" and time_server["toolExposure"] == {"convert_time": "hidden"}
    assert time_server["scope"] == "global" and time_server["source"] == str(pi.home / "mcp.json")
    assert off == {"name": "off", "scope": "global", "source": str(pi.home / "mcp.json"), "enabled": False,
                   "exposure": "codemode", "transport": "/nonexistent/server", "state": "disabled", "tools": []}
    [error] = report["errors"]
    assert error.endswith('server "old": legacy SSE transport is not supported; use the streamable HTTP URL')
