"""mcp.json rules (Pi 1.6's mcp.md): validation, merging with the project file, expansion, tool names."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pi_plugins.mcp.config import (
    ConfigError,
    load_config,
    update_server,
    validate_server,
)
from pi_plugins.mcp.expand import ExpansionError, expand_value
from pi_plugins.mcp.naming import assign_names, tool_name

from .conftest import write_mcp


def test_transport_is_chosen_by_command_or_url_and_type_is_checked() -> None:
    assert validate_server("a", {"command": "x"}).transport == "stdio"
    assert validate_server("a", {"url": "https://h/mcp", "type": "streamable-http"}).transport == "http"
    with pytest.raises(ConfigError, match='type must be "stdio", "http", or "streamable-http"'):
        validate_server("a", {"url": "https://h/mcp", "type": "websocket"})
    with pytest.raises(ConfigError, match="url must be an http or https URL"):
        validate_server("a", {"url": "ftp://h/mcp"})
    with pytest.raises(ConfigError, match='server "a": args must be an array of strings'):
        validate_server("a", {"command": "x", "args": "--flag"})
    with pytest.raises(ConfigError, match='exposure must be one of "codemode", "deferred", "direct", "hidden"'):
        validate_server("a", {"command": "x", "exposure": "visible"})
    assert validate_server("a", {"command": "x", "exposure": "codemode-deferred"}).exposure == "codemode"


def test_tool_exposure_exact_names_win_over_patterns_first_pattern_wins() -> None:
    config = validate_server("gh", {"url": "https://h/mcp", "exposure": "deferred", "toolExposure": {
        "search_code": "direct", "get_*": "hidden", "get_me": "direct", "*": "codemode"}})
    assert config.exposure_of("search_code") == "direct"
    assert config.exposure_of("get_me") == "direct"
    assert config.exposure_of("get_issue") == "hidden"
    assert config.exposure_of("delete_repo") == "codemode"


def test_oauth_options_are_validated() -> None:
    with pytest.raises(ConfigError, match="oauth.callbackUrl must be an http URI on localhost"):
        validate_server("a", {"url": "https://h/mcp", "oauth": {"callbackUrl": "https://example.com/cb"}})
    with pytest.raises(ConfigError, match='"cimd" is not supported: there are no Client ID Metadata Documents'):
        validate_server("a", {"url": "https://h/mcp", "oauth": {"clientRegistration": "cimd"}})
    with pytest.raises(ConfigError, match="oauth.authServerMetadataUrl must be an https URL"):
        validate_server("a", {"url": "https://h/mcp", "oauth": {"authServerMetadataUrl": "http://example.com/x"}})
    ok = validate_server("a", {"url": "https://h/mcp", "oauth": {"clientId": "c", "callbackPort": 8765}})
    assert ok.oauth is not None and ok.oauth.client_id == "c" and ok.uses_oauth
    assert not validate_server("a", {"url": "https://h/mcp", "headers": {"authorization": "x"}}).uses_oauth


def test_project_entries_replace_or_override_global_ones(tmp_path: Path) -> None:
    agent, cwd = tmp_path / "agent", tmp_path / "project"
    write_mcp(agent / "mcp.json", {"keep": {"command": "a", "env": {"TOKEN": "${SECRET}"}},
                                   "swap": {"command": "old"}, "dev-tools": {"command": "d"}})
    write_mcp(cwd / ".pi" / "mcp.json", {
        "keep": {"enabled": False, "exposure": "direct"},  # an override: the env of the global entry stays
        "swap": {"command": "new"},
        "dev_tools": {"command": "clash"},  # same namespace as dev-tools
        "orphan": {"enabled": True},
        "greedy": {"enabled": False, "env": {}},
    })
    config = load_config(agent, cwd, trusted=True)
    keep = config.find("keep")
    assert keep is not None and not keep.config.enabled and keep.config.exposure == "direct"
    assert keep.config.env == {"TOKEN": "${SECRET}"} and keep.override == cwd / ".pi" / "mcp.json"
    assert config.find("swap").config.command == "new"  # type: ignore[union-attr]
    errors = "\n".join(config.errors)
    assert 'server "dev_tools" conflicts with "dev-tools"' in errors
    assert 'server "orphan" needs "command" or "url", or a global server to override' in errors
    assert 'server "greedy" needs "command" or "url", or a global server to override' in errors
    assert load_config(agent, cwd, trusted=False).find("keep").config.enabled  # type: ignore[union-attr]


def test_broken_json_is_one_error_naming_the_file(tmp_path: Path) -> None:
    (tmp_path / "mcp.json").write_text('{"mcpServers": {"a": ')
    config = load_config(tmp_path, tmp_path, trusted=False)
    assert config.servers == [] and len(config.errors) == 1 and str(tmp_path / "mcp.json") in config.errors[0]


def test_updates_keep_other_content_and_indentation(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text('{\n    "other": 1,\n    "mcpServers": {"a": {"command": "x", "enabled": false}}\n}\n')
    update_server(path, "a", enabled=True, exposure="direct")
    text = path.read_text()
    assert text.startswith('{\n    "other": 1,')
    assert json.loads(text)["mcpServers"]["a"] == {"command": "x", "exposure": "direct"}
    update_server(tmp_path / "project.json", "a", enabled=False, create_override=True)
    assert json.loads((tmp_path / "project.json").read_text())["mcpServers"]["a"] == {"enabled": False}


def test_value_expansion(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOKEN", "t0k")
    monkeypatch.delenv("MISSING", raising=False)
    assert expand_value("Bearer ${TOKEN}", "h") == "Bearer t0k"
    assert expand_value("$TOKEN-$$-$!x", "h") == "t0k-$-!x"
    assert expand_value("!printf 'from a command'", "h") == "from a command"
    with pytest.raises(ExpansionError, match='Failed to resolve MCP env "K" from environment variable: MISSING'):
        expand_value("${MISSING}", 'MCP env "K"')
    with pytest.raises(ExpansionError, match="from shell command: exit 3"):
        expand_value("!exit 3", "h")


def test_tool_names_are_sanitised_shortened_and_unique() -> None:
    assert tool_name("my-server", "get.thing") == "mcp__my_server__get_thing"
    long = tool_name("s", "x" * 80)
    assert len(long) == 64 and long.startswith("mcp__s__xxx")
    owners: dict[str, str] = {}
    names = assign_names("s", ["a-b", "a_b", "c"], owners)
    assert names["c"] == "mcp__s__c"
    assert names["a-b"] != names["a_b"] and all(len(n) == len("mcp__s__a_b") + 9 for n in (names["a-b"],
                                                                                        names["a_b"]))
    again = assign_names("s", ["a_b", "a-b", "c"], owners)  # the order of the listing does not matter
    assert again == names
