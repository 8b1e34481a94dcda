"""pi_core.testing.kit: loading plugins every way, running tools as the loop does, scripted conversations."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from pi_core.testing.fake_provider import reply
from pi_core.testing.fake_server import FakeModelServer, Reply
from pi_core.testing.kit import (
    load_plugin,
    result_text,
    run_pi,
    run_tool,
    write_fake_models,
)

PLUGIN = '''
from pi_core import Tool, ToolError, hookimpl

async def execute(args, ctx):
    if args["n"] < 0:
        raise ToolError("n must not be negative; pass 0 or more")
    ctx.update("halfway")
    return f"{args['n'] * 2} in {ctx.cwd.name}"

TOOL = Tool(name="double", description="Double a number.", execute=execute,
            parameters={"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]})

@hookimpl
def pi_tools():
    return [TOOL]
'''


@pytest.fixture
def plugin_file(tmp_path: Path) -> Path:
    path = tmp_path / "doubler.py"
    path.write_text(PLUGIN)
    return path


def test_load_by_path_and_by_dotted_name(plugin_file: Path) -> None:
    loaded = load_plugin(plugin_file)
    assert list(loaded.registry.tools.items) == ["double"]
    assert loaded.plugins.info["doubler"].layer == "explicit"
    builtin = load_plugin("pi_builtin_tools.ls")
    assert list(builtin.registry.tools.items) == ["ls"]
    with pytest.raises(KeyError, match="no tool 'nope'; registered: ls"):
        builtin.tool("nope")


def test_a_plugin_that_fails_to_load_raises(tmp_path: Path) -> None:
    broken = tmp_path / "broken.py"
    broken.write_text("raise RuntimeError('boom')\n")
    with pytest.raises(RuntimeError, match="plugin 'broken' failed to load: RuntimeError: boom"):
        load_plugin(broken)


def test_builtins_true_loads_what_pi_loads() -> None:
    loaded = load_plugin(builtins=True)
    assert {"read", "bash", "edit", "write"} <= set(loaded.registry.tools.items)


def test_run_tool_validates_coerces_and_reports_errors_like_the_loop(plugin_file: Path, tmp_path: Path) -> None:
    loaded = load_plugin(plugin_file)
    result, is_error = run_tool(loaded, "double", {"n": "21"}, tmp_path)  # "21" coerced to 21
    assert (result_text(result), is_error) == (f"42 in {tmp_path.name}", False)
    result, is_error = run_tool(loaded, "double", {"n": -1}, tmp_path)
    assert (result_text(result), is_error) == ("n must not be negative; pass 0 or more", True)
    result, is_error = run_tool(loaded, "double", {}, tmp_path)
    assert is_error and result_text(result).startswith('Validation failed for tool "double"')
    result, is_error = run_tool(loaded, "nope", {}, tmp_path)
    assert (result_text(result), is_error) == ("Tool nope not found", True)


def test_run_tool_accepts_a_plain_tool_list(tmp_path: Path) -> None:
    from pi_builtin_tools.ls import TOOL

    (tmp_path / "a.txt").write_text("x")
    result, is_error = run_tool([TOOL], "ls", {}, tmp_path)
    assert not is_error and result_text(result) == "a.txt"


def test_fixtures(pi_plugin, pi_run_tool, pi_conversation, plugin_file: Path, tmp_path: Path) -> None:
    loaded = pi_plugin(plugin_file)
    assert pi_run_tool(loaded, "double", {"n": 2})[0].content[0].text == f"4 in {tmp_path.name}"
    convo = pi_conversation(loaded, [reply(tool_calls=[("double", {"n": 5})]), reply("ten")], "double 5")
    assert convo.sent_tool_names(0) == ["double"]
    assert [m.role for m in convo.messages] == ["user", "assistant", "toolResult", "assistant"]
    assert convo.tool_results[0].content[0].text == f"10 in {tmp_path.name}"
    assert any(e.type == "tool_execution_update" for e in convo.events)
    assert convo.provider.contexts[1].messages[-1].content[0].text == f"10 in {tmp_path.name}"


def test_conversation_in_an_async_test(plugin_file: Path, tmp_path: Path) -> None:
    from pi_core.testing.kit import run_conversation_async

    convo = asyncio.run(run_conversation_async(load_plugin(plugin_file), [reply("hi")], "hello", tmp_path))
    assert convo.messages[-1].content[0].text == "hi"


def test_run_pi_against_the_fake_server(tmp_path: Path) -> None:
    with FakeModelServer() as server:
        write_fake_models(tmp_path / "agent", server)
        server.add(Reply(text="hello from the fake"))
        result = run_pi("--provider", "fake", "--model", "fake-model", "--no-session", "-p", "hi",
                        agent_dir=tmp_path / "agent", cwd=tmp_path)
        assert result.returncode == 0, result.stderr
        assert result.stdout == "hello from the fake\n"
        assert server.requests[0].path.startswith("/v1beta/models/fake-model:streamGenerateContent")


def test_the_kits_keyword_types_name_the_fields_they_fill() -> None:
    """``options(**fields)``, ``user_context(**fields)`` and ``run_conversation(**kwargs)`` are typed by TypedDicts
    that repeat the fields of what they build: a field added there and not here would go untyped for callers."""
    import dataclasses
    import inspect

    from pi_core.providers import StreamOptions
    from pi_core.testing.kit import ConversationOptions, run_conversation_async
    from pi_core.testing.streams import ContextFields, StreamOptionsFields
    from pi_core.types import Context

    assert set(StreamOptionsFields.__annotations__) == {f.name for f in dataclasses.fields(StreamOptions)}
    assert set(ContextFields.__annotations__) == set(Context.model_fields) - {"messages"}
    keywords = [p.name for p in inspect.signature(run_conversation_async).parameters.values()
                if p.kind is inspect.Parameter.KEYWORD_ONLY]
    assert set(ConversationOptions.__annotations__) == set(keywords)
