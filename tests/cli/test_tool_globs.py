"""Pi 1.6's --tools / --exclude-tools grammar: * patterns, +name/-name entries, MCP names (issue 16 item 8)."""

from __future__ import annotations

from pi_core.testing.fake_server import Reply

from .conftest import PiRunner


def test_patterns_select_and_exclude(pi_anthropic: PiRunner) -> None:
    pi = pi_anthropic
    pi.server.add(*(Reply(text="ok") for _ in range(4)))
    assert pi.run("-p", "--tools", "read,*i*", "x").returncode == 0
    assert pi.sent_tools(0) == ["read", "edit", "write", "find"]  # patterns pick direct tools, in pi's order
    assert pi.run("-p", "--exclude-tools", "*e*", "x").returncode == 0
    assert pi.sent_tools(1) == ["bash"]
    assert pi.run("-p", "-xt", "b*,w*", "x").returncode == 0
    assert pi.sent_tools(2) == ["read", "edit"]
    assert pi.run("-p", "--tools", "gr?p*", "x").returncode == 0  # only * is special
    assert pi.sent_tools(3) == []


def test_plus_and_minus_entries_change_the_default_selection(pi_anthropic: PiRunner) -> None:
    pi = pi_anthropic
    pi.server.add(Reply(text="ok"), Reply(text="ok"), Reply(text="ok"))
    assert pi.run("-p", "--tools", "+grep,-write", "x").returncode == 0
    assert pi.sent_tools(0) == ["read", "bash", "edit", "grep"]
    assert pi.run("-p", "--tools", "+tool_search", "x").returncode == 0
    assert pi.sent_tools(1) == ["read", "bash", "edit", "write", "tool_search"]
    assert pi.run("-p", "--no-tools", "--tools", "+ls", "x").returncode == 0
    assert pi.sent_tools(2) == ["ls"]


def test_mixing_names_and_modifiers_or_modifier_patterns_is_an_error(pi_anthropic: PiRunner) -> None:
    pi = pi_anthropic
    mixed = pi.run("-p", "--tools", "read,+grep", "x")
    assert mixed.returncode == 1
    assert "Invalid tools option: tool names cannot be mixed with +name or -name entries" in mixed.stderr
    pattern = pi.run("-p", "--tools", "+g*", "x")
    assert pattern.returncode == 1
    assert "+name and -name entries take exact tool names, not patterns: +g*" in pattern.stderr
    assert pi.server.requests == []


def test_plain_unknown_names_are_errors_but_patterns_and_mcp_names_are_not(pi_anthropic: PiRunner) -> None:
    pi = pi_anthropic
    for flags in (["--tools", "read,nope"], ["--tools", "+nope"], ["--exclude-tools", "nope"]):
        result = pi.run("-p", *flags, "x")
        assert result.returncode == 1, flags
        assert "Unknown tool: nope. Known tools: read, bash, edit, write" in result.stderr
    pi.server.add(Reply(text="ok"), Reply(text="ok"))
    # no MCP server is configured: MCP names and patterns match nothing yet, which is not an error
    ok = pi.run("-p", "--tools", "read,nothing*,mcp__docs__search,read_mcp_resource", "x")
    assert ok.returncode == 0, ok.stderr
    assert pi.sent_tools(0) == ["read"]
    assert pi.run("-p", "--exclude-tools", "mcp__docs__search,zz*", "x").returncode == 0
    assert pi.sent_tools(1) == ["read", "bash", "edit", "write"]
