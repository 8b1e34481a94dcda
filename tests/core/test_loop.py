"""The agent loop and Agent class (docs/loop.md), driven through the Python API."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

from pi_core import BeforeToolCall
from pi_core.agent import Agent
from pi_core.events import AgentEvent
from pi_core.loop import (
    AgentContext,
    LoopConfig,
    run_agent_loop,
    run_agent_loop_continue,
)
from pi_core.signals import AbortSignal
from pi_core.testing.fake_provider import FakeProvider, reply
from pi_core.toolkit.arguments import PI_ARGUMENTS
from pi_core.tools import Tool, ToolResult
from pi_core.types import CustomMessage, Model, TextContent, UserMessage

MODEL = Model(id="fake-1", api="fake", provider="fake")
ECHO_SCHEMA = {"type": "object", "properties": {"value": {"type": "string"}}, "required": ["value"]}


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def echo_tool(calls: list[str], delays: dict[str, float] | None = None, **kw: Any) -> Tool:
    async def execute(args: dict[str, Any], ctx: Any) -> ToolResult:
        calls.append(args["value"])
        await asyncio.sleep((delays or {}).get(args["value"], 0))
        return ToolResult.text(f"echo: {args['value']}")

    return Tool(name="echo", description="Echo a value.", parameters=ECHO_SCHEMA, execute=execute, **kw)


class Recorder:
    def __init__(self) -> None:
        self.events: list[AgentEvent] = []

    async def __call__(self, event: AgentEvent) -> None:
        self.events.append(event)

    def types(self) -> list[str]:
        return [e.type for e in self.events]


def loop_config(provider: FakeProvider, **kw: Any) -> LoopConfig:
    return LoopConfig(model=MODEL, stream_fn=provider.stream, cwd=Path("."), arguments=PI_ARGUMENTS, **kw)


def test_prompt_hello_emits_canonical_sequence() -> None:
    provider = FakeProvider(reply("Hi there!"))
    rec = Recorder()
    prompt = UserMessage(content=[TextContent(text="Hello")])
    new = run(run_agent_loop([prompt], AgentContext("", []), loop_config(provider), rec, AbortSignal()))
    assert [m.role for m in new] == ["user", "assistant"]
    assert new[1].text() == "Hi there!"
    types = [t for t in rec.types() if t != "message_update"]
    assert types == ["agent_start", "turn_start", "message_start", "message_end", "message_start",
                     "message_end", "turn_end", "agent_end"]


def test_convert_to_llm_filters_custom_messages() -> None:
    provider = FakeProvider(reply("ok"))
    seen: list[int] = []

    def convert(messages: list[Any]) -> list[Any]:
        kept = [m for m in messages if m.role != "notification"]
        seen.append(len(kept))
        return kept

    context = AgentContext("", [CustomMessage(role="notification", text="note")])
    run(run_agent_loop([UserMessage(content="hi")], context, loop_config(provider, convert_to_llm=convert),
                       Recorder(), AbortSignal()))
    assert seen == [1]


def test_transform_context_runs_before_convert() -> None:
    provider = FakeProvider(reply("ok"))
    history = [UserMessage(content=f"m{i}") for i in range(4)]
    config = loop_config(provider, transform_context=lambda messages, signal: messages[-2:])
    run(run_agent_loop([UserMessage(content="m4")], AgentContext("", history), config, Recorder(), AbortSignal()))
    assert len(provider.contexts[0].messages) == 2


def test_tool_call_then_answer() -> None:
    calls: list[str] = []
    provider = FakeProvider(reply(tool_calls=[("echo", {"value": "hello"})]), reply("done"))
    rec = Recorder()
    context = AgentContext("", [], [echo_tool(calls)])
    new = run(run_agent_loop([UserMessage(content="go")], context, loop_config(provider), rec, AbortSignal()))
    assert calls == ["hello"]
    ends = [e for e in rec.events if e.type == "tool_execution_end"]
    assert len(ends) == 1 and ends[0].is_error is False
    assert [m.role for m in new] == ["user", "assistant", "toolResult", "assistant"]
    assert provider.contexts[1].messages[-1].text() == "echo: hello"


def test_parallel_calls_overlap_and_results_keep_source_order() -> None:
    calls: list[str] = []
    provider = FakeProvider(reply(tool_calls=[("echo", {"value": "first"}), ("echo", {"value": "second"})]),
                            reply("done"))
    rec = Recorder()
    context = AgentContext("", [], [echo_tool(calls, {"first": 0.05})])
    run(run_agent_loop([UserMessage(content="go")], context, loop_config(provider), rec, AbortSignal()))
    ends = [e.tool_call_id for e in rec.events if e.type == "tool_execution_end"]
    results = [e.message.tool_call_id for e in rec.events
               if e.type == "message_end" and e.message.role == "toolResult"]
    assert calls == ["first", "second"]
    assert ends == list(reversed(results))  # second finished first
    assert results == sorted(results, key=lambda i: int(i.split("_")[1]))


def test_steering_reaches_next_request_after_whole_batch() -> None:
    calls: list[str] = []
    provider = FakeProvider(reply(tool_calls=[("echo", {"value": "a"}), ("echo", {"value": "b"})]), reply("ok"))
    queue: list[Any] = []
    rec = Recorder()

    async def emit(event: AgentEvent) -> None:
        await rec(event)
        if event.type == "tool_execution_end" and not queue and len(calls) == 1:
            queue.append(UserMessage(content="interrupt"))

    def steering() -> list[Any]:
        taken = list(queue)
        queue.clear()
        return taken

    config = loop_config(provider, tool_execution="sequential", get_steering_messages=steering)
    context = AgentContext("", [], [echo_tool(calls)])
    run(run_agent_loop([UserMessage(content="go")], context, config, emit, AbortSignal()))
    assert calls == ["a", "b"]
    second = provider.contexts[1].messages
    assert [m.role for m in second[-3:]] == ["toolResult", "toolResult", "user"]
    assert second[-1].content == "interrupt"


def test_continue_errors() -> None:
    provider = FakeProvider()
    with pytest.raises(ValueError, match="Cannot continue: no messages in context"):
        run(run_agent_loop_continue(AgentContext("", []), loop_config(provider), Recorder(), AbortSignal()))


def test_continue_from_user_emits_only_assistant() -> None:
    provider = FakeProvider(reply("answer"))
    rec = Recorder()
    new = run(run_agent_loop_continue(AgentContext("", [UserMessage(content="q")]), loop_config(provider),
                                      rec, AbortSignal()))
    assert [m.role for m in new] == ["assistant"]
    assert rec.types().count("message_end") == 1


def test_continue_from_custom_role_converted_to_user() -> None:
    provider = FakeProvider(reply("answer"))

    def convert(messages: list[Any]) -> list[Any]:
        return [UserMessage(content=m.text) if m.role == "custom" else m for m in messages]

    new = run(run_agent_loop_continue(AgentContext("", [CustomMessage(role="custom", text="x")]),
                                      loop_config(provider, convert_to_llm=convert), Recorder(), AbortSignal()))
    assert [m.role for m in new] == ["assistant"]


def test_before_tool_call_mutated_args_are_not_revalidated() -> None:
    calls: list[Any] = []

    async def execute(args: dict[str, Any], ctx: Any) -> str:
        calls.append(args["value"])
        return "ok"

    tool = Tool(name="echo", description="", parameters=ECHO_SCHEMA, execute=execute)

    def before(info: Any, signal: Any) -> None:
        info.args["value"] = 42  # not a string: would fail validation

    provider = FakeProvider(reply(tool_calls=[("echo", {"value": "x"})]), reply("done"))
    run(run_agent_loop([UserMessage(content="go")], AgentContext("", [], [tool]),
                       loop_config(provider, before_tool_call=before), Recorder(), AbortSignal()))
    assert calls == [42]


def test_blocked_call_gets_reason() -> None:
    provider = FakeProvider(reply(tool_calls=[("echo", {"value": "x"})]), reply("done"))
    rec = Recorder()
    run(run_agent_loop([UserMessage(content="go")], AgentContext("", [], [echo_tool([])]),
                       loop_config(provider, before_tool_call=lambda info, s: BeforeToolCall(block=True)),
                       rec, AbortSignal()))
    result = provider.contexts[1].messages[-1]
    assert result.is_error and result.text() == "Tool execution was blocked"


def test_length_stop_does_not_execute() -> None:
    calls: list[str] = []
    provider = FakeProvider(reply(tool_calls=[("echo", {"value": "x"})], stop_reason="length"), reply("done"))
    run(run_agent_loop([UserMessage(content="go")], AgentContext("", [], [echo_tool(calls)]),
                       loop_config(provider), Recorder(), AbortSignal()))
    assert calls == []
    result = provider.contexts[1].messages[-1]
    assert result.is_error
    assert result.text() == ('Tool call "echo" was not executed: the response hit the output token limit, so its '
                             "arguments may be truncated. Re-issue the tool call with complete arguments.")


def test_unknown_tool_ends_first_but_messages_keep_order() -> None:
    calls: list[str] = []
    provider = FakeProvider(reply(tool_calls=[("echo", {"value": "a"}), ("nope", {}), ("echo", {"value": "c"})]),
                            reply("done"))
    rec = Recorder()
    run(run_agent_loop([UserMessage(content="go")], AgentContext("", [], [echo_tool(calls)]),
                       loop_config(provider), rec, AbortSignal()))
    ends = [e.tool_name for e in rec.events if e.type == "tool_execution_end"]
    assert ends[0] == "nope"
    messages = [e.message for e in rec.events if e.type == "message_end" and e.message.role == "toolResult"]
    assert [m.tool_name for m in messages] == ["echo", "nope", "echo"]
    assert messages[1].text() == "Tool nope not found"


def test_terminate_skips_next_llm_call() -> None:
    async def execute(args: dict[str, Any], ctx: Any) -> ToolResult:
        return ToolResult(content=[TextContent(text="bye")], terminate=True)

    tool = Tool(name="finish", description="", parameters={"type": "object", "properties": {}}, execute=execute)
    provider = FakeProvider(reply(tool_calls=[("finish", {})]))
    rec = Recorder()
    run(run_agent_loop([UserMessage(content="go")], AgentContext("", [], [tool]), loop_config(provider),
                       rec, AbortSignal()))
    assert len(provider.contexts) == 1
    assert rec.types()[-2:] == ["turn_end", "agent_end"]


def test_sync_tool_runs_in_thread_and_streams_updates() -> None:
    def execute(args: dict[str, Any], ctx: Any) -> str:
        ctx.update("half")
        time.sleep(0.01)
        return "whole"

    tool = Tool(name="slow", description="", parameters={"type": "object", "properties": {}}, execute=execute)
    provider = FakeProvider(reply(tool_calls=[("slow", {})]), reply("done"))
    rec = Recorder()
    run(run_agent_loop([UserMessage(content="go")], AgentContext("", [], [tool]), loop_config(provider),
                       rec, AbortSignal()))
    types = rec.types()
    assert types.index("tool_execution_update") < types.index("tool_execution_end")
    assert provider.contexts[1].messages[-1].text() == "whole"


def test_a_quick_sync_call_runs_on_the_loop_thread_and_others_in_a_worker() -> None:
    import threading

    threads: dict[str, str] = {}

    def execute(args: dict[str, Any], ctx: Any) -> str:
        ctx.update("half")
        threads[args["value"]] = threading.current_thread().name
        return f"ran {args['value']}"

    tool = Tool(name="echo", description="", parameters=ECHO_SCHEMA, execute=execute,
                quick=lambda args, ctx: args["value"] == "small")
    provider = FakeProvider(reply(tool_calls=[("echo", {"value": "small"}), ("echo", {"value": "big"})]),
                            reply("done"))
    rec = Recorder()
    run(run_agent_loop([UserMessage(content="go")], AgentContext("", [], [tool]), loop_config(provider),
                       rec, AbortSignal()))
    assert threads["small"] == threading.main_thread().name != threads["big"]
    assert [m.text() for m in provider.contexts[1].messages[-2:]] == ["ran small", "ran big"]
    assert rec.types().count("tool_execution_update") == 2


def test_tool_declarations_are_built_once_and_follow_a_changed_description() -> None:
    calls: list[str] = []
    tool = echo_tool(calls)
    provider = FakeProvider(reply(tool_calls=[("echo", {"value": "a"})]), reply("done"), reply("again"))
    context = AgentContext("", [], [tool])
    run(run_agent_loop([UserMessage(content="go")], context, loop_config(provider), Recorder(), AbortSignal()))
    first, second = (c.tools[0] for c in provider.contexts)  # type: ignore[index]
    assert first is second and first.name == "echo" and first.parameters == ECHO_SCHEMA
    tool.description = "Echo a value back."
    run(run_agent_loop([UserMessage(content="more")], context, loop_config(provider), Recorder(), AbortSignal()))
    assert provider.contexts[-1].tools[0].description == "Echo a value back."  # type: ignore[index]


def test_validation_failure_text_reaches_model() -> None:
    provider = FakeProvider(reply(tool_calls=[("echo", {"value": ["a"]})]), reply("done"))
    run(run_agent_loop([UserMessage(content="go")], AgentContext("", [], [echo_tool([])]),
                       loop_config(provider), Recorder(), AbortSignal()))
    assert provider.contexts[1].messages[-1].text() == (
        'Validation failed for tool "echo":\n  - value: must be string\n\n'
        'Received arguments:\n{\n  "value": [\n    "a"\n  ]\n}')


def test_arguments_are_checked_by_the_check_the_agent_is_given() -> None:
    """The kernel's Agent runs a call with what its ``ArgumentCheck`` makes of the arguments: none given, the
    tool gets them as the model sent them; a session's (PI_ARGUMENTS) coerces and refuses as Pi does."""
    async def scenario(**kwargs: Any) -> tuple[list[str], str]:
        calls: list[str] = []
        provider = FakeProvider(reply(tool_calls=[("echo", {"value": 7})]), reply("done"))
        agent = Agent(stream_fn=provider.stream, model=MODEL, tools=[echo_tool(calls)], **kwargs)
        await agent.prompt("go")
        return calls, provider.contexts[1].messages[-1].text()

    assert run(scenario())[0] == [7]
    assert run(scenario(arguments=PI_ARGUMENTS))[0] == ["7"]  # Pi's coercion: a number for a string
    refused = FakeProvider(reply(tool_calls=[("echo", {"value": ["a"]})]), reply("done"))
    agent = Agent(stream_fn=refused.stream, model=MODEL, tools=[echo_tool([])], arguments=PI_ARGUMENTS)
    run(agent.prompt("go"))
    assert refused.contexts[1].messages[-1].text().startswith('Validation failed for tool "echo":')


# --- Agent class ----------------------------------------------------------------------------------


def test_agent_default_state() -> None:
    agent = Agent()
    state = agent.state
    assert (state.system_prompt, state.thinking_level, state.model.id) == ("", "off", "unknown")
    assert state.tools == [] and state.messages == []
    assert state.is_streaming is False and state.streaming_message is None
    assert state.pending_tool_calls == frozenset() and state.error_message is None


def test_agent_state_assignment_copies_and_subscribe_is_silent() -> None:
    agent = Agent()
    seen: list[Any] = []
    unsubscribe = agent.subscribe(lambda e, s: seen.append(e))
    messages = [UserMessage(content="x")]
    agent.state.messages = messages
    assert agent.state.messages == messages and agent.state.messages is not messages
    agent.state.system_prompt = "changed"
    agent.steer("later")
    agent.follow_up("after")
    assert seen == [] and len(agent.state.messages) == 1
    agent.abort()  # idle: no error
    unsubscribe()


def test_agent_prompt_while_streaming_raises() -> None:
    async def scenario() -> None:
        agent = Agent(stream_fn=FakeProvider(reply("slow"), delay=0.05).stream, model=MODEL)
        task = asyncio.create_task(agent.prompt("one"))
        await asyncio.sleep(0.01)
        with pytest.raises(RuntimeError, match="already processing a prompt"):
            await agent.prompt("two")
        with pytest.raises(RuntimeError, match="before continuing"):
            await agent.continue_()
        await task

    run(scenario())


def test_agent_continue_with_follow_up_and_steering() -> None:
    async def scenario() -> None:
        provider = FakeProvider(reply("a"), reply("b"), reply("c"), reply("d"))
        agent = Agent(stream_fn=provider.stream, model=MODEL, session_id="session-abc")
        await agent.prompt("start")
        agent.follow_up("more")
        await agent.continue_()
        assert agent.state.messages[-2].content[0].text == "more"
        assert agent.state.messages[-1].role == "assistant"
        agent.steer("s1")
        agent.steer("s2")
        calls = len(provider.contexts)
        await agent.continue_()
        assert [m.role for m in agent.state.messages[-4:]] == ["user", "assistant", "user", "assistant"]
        assert len(provider.contexts) - calls == 2
        assert provider.options[0].session_id == "session-abc"

    run(scenario())


def test_agent_abort_during_tool_keeps_partial_turn() -> None:
    async def scenario() -> None:
        async def execute(args: dict[str, Any], ctx: Any) -> str:
            await ctx.signal.wait()
            raise RuntimeError("Operation aborted")

        tool = Tool(name="wait", description="", parameters={"type": "object", "properties": {}}, execute=execute)
        provider = FakeProvider(reply(tool_calls=[("wait", {})]), reply("never"))
        agent = Agent(stream_fn=provider.stream, model=MODEL, tools=[tool])
        task = asyncio.create_task(agent.prompt("go"))
        while not agent.state.pending_tool_calls:
            await asyncio.sleep(0.005)
        agent.abort()
        await task
        roles = [m.role for m in agent.state.messages]
        assert roles == ["user", "assistant", "toolResult", "assistant"]
        assert agent.state.messages[2].text() == "Operation aborted"
        assert agent.state.messages[-1].stop_reason == "aborted"

    run(scenario())
