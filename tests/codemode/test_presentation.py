"""How tools are presented while codemode is active: ``codemode.mode`` (on/only), ``codemode.inlineBudget``, the
TypeScript declarations in the codemode description, and MCP tools under ``codemode`` exposure."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from pi_core.testing.fake_server import Reply
from pi_core.testing.runner import PiRunner

from .conftest import result_of, scripts, tool_named

READ_DECLARATION = """codemode tool declaration:
```ts
declare const tools: { read(args: {
  // How many lines to show at most
  limit?: number;
  // First line to show, counting from 1
  offset?: number;
  // File to read: a path relative to the working directory, or absolute
  path: string;
}): Promise<string | { data: string; mimeType: string; note: string; type: "image"; }>; };
```"""


def settings(pi: PiRunner, values: dict[str, object]) -> None:
    (pi.home / "settings.json").write_text(json.dumps(values))


def declared(pi: PiRunner, index: int = 0) -> list[str]:
    return [t["name"] for t in pi.server.requests[index].body.get("tools", [])]


def test_mode_on_keeps_tools_declared_with_a_note_on_calling_them_from_scripts(pi: PiRunner) -> None:
    pi.server.add(Reply(text="ok"))
    assert pi.run("-p", "--tools", "+codemode,-write", "x").returncode == 0
    assert declared(pi) == ["read", "bash", "edit", "codemode"]
    body = pi.server.requests[0].body
    assert tool_named(body, "bash")["description"].endswith(
        "\n\nCodemode: `tools.bash(args)` resolves to `{ output, truncated, full_output_path?, exit_code, "
        "wall_time_seconds }`.")
    assert tool_named(body, "read")["description"].endswith(
        '\n\nCodemode: `tools.read(args)` resolves to `string | { data: string; mimeType: string; note: string; '
        'type: "image"; }`.')
    assert tool_named(body, "edit")["description"].endswith("\n\nCodemode: `tools.edit(args)` resolves to a string.")
    codemode = tool_named(body, "codemode")["description"]
    assert codemode.startswith("Run JavaScript that calls other tools. The input is raw JavaScript")
    assert "Nested tools:" not in codemode  # every callable tool is declared already
    system = json.dumps(body["system"])
    assert "codemode: Run JavaScript that calls other tools" in system
    assert "Use codemode to batch independent tool calls (Promise.allSettled)" in system


def test_mode_only_hides_the_tools_and_lists_them_as_declarations(pi: PiRunner) -> None:
    settings(pi, {"codemode": {"mode": "only"}})
    pi.server.add(*scripts("return ALL_TOOLS.map(t => t.name)", 'return (await tools.bash({command: "echo hi"})).output'))
    assert pi.run("-p", "--tools", "+codemode", "x").returncode == 0
    assert declared(pi) == ["codemode"]
    description = tool_named(pi.server.requests[0].body, "codemode")["description"]
    from pi_builtin_tools.read import TOOL as READ

    assert "\n\nNested tools:\n\n### `read`\n" + READ.description + "\n\n- Look at files with read, not with cat or sed."\
        "\n\n" + READ_DECLARATION in description
    for name in ("bash", "edit", "write"):
        assert f"\n\n### `{name}`\n" in description
    assert result_of(pi, 0)["text"].endswith('["read","bash","edit","write"]')
    assert result_of(pi, 1)["text"].endswith("hi\n")
    assert declared(pi, 2) == ["codemode"]  # still hidden on the next turns


def test_inline_budget_zero_lists_no_declarations(pi: PiRunner) -> None:
    settings(pi, {"codemode": {"mode": "only", "inlineBudget": 0}})
    pi.server.add(*scripts('return (await describeTool("write")).split("\\n")[0]'))
    assert pi.run("-p", "--tools", "+codemode", "x").returncode == 0
    description = tool_named(pi.server.requests[0].body, "codemode")["description"]
    assert description.endswith("\n\nNested tools:")
    from pi_builtin_tools.write import TOOL as WRITE

    assert result_of(pi, 0)["text"].endswith("\n" + WRITE.description.split("\n")[0])


def test_default_tools_setting_adds_codemode(pi: PiRunner) -> None:
    settings(pi, {"defaultTools": ["+codemode"]})
    pi.server.add(Reply(text="ok"))
    assert pi.run("-p", "x").returncode == 0
    assert declared(pi) == ["read", "bash", "edit", "write", "codemode"]


def mcp_server(pi: PiRunner) -> None:
    bin_dir = Path(sys.executable).parent
    (pi.home / "mcp.json").write_text(json.dumps({"mcpServers": {"time": {
        "command": str(bin_dir / "mcp-server-time"), "args": ["--local-timezone", "UTC"]}}}))


def test_mcp_tools_under_codemode_exposure_are_found_and_called_from_scripts(pi: PiRunner) -> None:
    mcp_server(pi)
    pi.server.add(*scripts(
        'return (await searchTools("current time in a timezone", {namespace: "time"})).map(t => t.name)',
        'const r = await describeNamespace("time"); return r.tools',
        'return JSON.parse(await tools.mcp__time__get_current_time({timezone: "Europe/Paris"})).timezone'))
    result = pi.run("-p", "--tools", "+codemode", "x", timeout=120)
    assert result.returncode == 0, result.stderr
    assert "mcp__time__get_current_time" not in declared(pi)  # deferred: neither declared nor listed
    assert "mcp__time" not in tool_named(pi.server.requests[0].body, "codemode")["description"]
    assert json.loads(result_of(pi, 0)["text"].rsplit("\n", 1)[1])[0] == "mcp__time__get_current_time"
    assert "mcp__time__convert_time" in result_of(pi, 1)["text"]
    assert result_of(pi, 2)["text"].endswith("Europe/Paris")


def test_tool_search_pairs_with_codemode(pi: PiRunner) -> None:
    mcp_server(pi)
    pi.server.add(Reply(tool_calls=[("tool_search", {"query": "convert time"})]), *scripts(
        'return [ALL_TOOLS.some(t => t.name === "tool_search"), ALL_TOOLS.some(t => t.name === "codemode"), '
        'ALL_TOOLS.some(t => t.name === "mcp__time__convert_time")]'))
    result = pi.run("-p", "--tools", "+codemode,+tool_search", "x", timeout=120)
    assert result.returncode == 0, result.stderr
    assert set(declared(pi)[-2:]) == {"tool_search", "codemode"}
    assert "mcp__time__convert_time" in declared(pi, 1)  # tool_search declared it for the next call
    assert result_of(pi, 1)["text"].endswith("[false,false,true]")  # model-only tools are not callable
