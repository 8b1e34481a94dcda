"""The agent loop (docs/loop.md): stream a reply, run its tool calls, repeat until done.

Stateless functions driving one run. Everything the loop produces goes through ``emit`` (awaited, so
listeners act as barriers), and every failure of a tool becomes an error result the model reads.
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pi_core.errors import ToolError
from pi_core.events import AgentEvent, Emit
from pi_core.hookspecs.results import AfterToolCall, BeforeToolCall
from pi_core.providers import StreamOptions
from pi_core.signals import AbortSignal
from pi_core.tools import (
    UNCHECKED,
    ArgumentCheck,
    NestedCall,
    Tool,
    ToolCallInfo,
    ToolContext,
    ToolResult,
    ToolSettings,
)
from pi_core.types import (
    AgentMessage,
    AssistantMessage,
    AssistantMessageEvent,
    Context,
    Message,
    Model,
    TextContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)

if TYPE_CHECKING:
    from pi_core.extension import ExtensionContext

StreamFn = Callable[[Model, Context, StreamOptions], AsyncIterator[AssistantMessageEvent]]

ABORTED_TEXT = "Request was aborted"
OPERATION_ABORTED_TEXT = "Operation aborted"
LENGTH_STOP_TEXT = (
    'Tool call "{name}" was not executed: the response hit the output token limit, so its arguments '
    "may be truncated. Re-issue the tool call with complete arguments."
)


def default_convert_to_llm(messages: list[AgentMessage]) -> list[Message]:
    return [m for m in messages if isinstance(m, (UserMessage, AssistantMessage, ToolResultMessage))]


async def _maybe_await(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


@dataclass(eq=False, repr=False)
class AgentContext:
    """What the loop sends: the system prompt, the messages and the tools."""

    system_prompt: str
    messages: list[AgentMessage]
    tools: list[Tool] = field(default_factory=list)


@dataclass(eq=False, repr=False)
class LoopConfig:
    """How the loop runs: the model, the stream function and the hooks between turns."""

    model: Model
    stream_fn: StreamFn
    convert_to_llm: Callable[[list[AgentMessage]], list[Message]] = default_convert_to_llm
    transform_context: Callable[[list[AgentMessage], AbortSignal], object] | None = None
    get_api_key: Callable[[str], object] | None = None
    get_steering_messages: Callable[[], list[AgentMessage]] | None = None
    get_follow_up_messages: Callable[[], list[AgentMessage]] | None = None
    tool_execution: Literal["parallel", "sequential"] = "parallel"
    before_tool_call: Callable[[ToolCallInfo, AbortSignal], object] | None = None
    after_tool_call: Callable[[ToolCallInfo, ToolResult, bool, AbortSignal], object] | None = None
    should_stop_after_turn: Callable[[dict[str, Any]], bool] | None = None  # open: an assistant message as Pi's JSON
    options: StreamOptions = field(default_factory=StreamOptions)
    cwd: Path = field(default_factory=Path.cwd)
    tool_settings: ToolSettings = field(default_factory=ToolSettings)
    extension: ExtensionContext | None = None  # ToolContext.pi
    # Re-read before every LLM call, so a tool that activates other tools takes effect next turn.
    get_tools: Callable[[], list[Tool]] | None = None
    arguments: ArgumentCheck = UNCHECKED  # sessions: pi_core.toolkit.arguments.PI_ARGUMENTS


async def run_agent_loop(prompts: list[AgentMessage], context: AgentContext, config: LoopConfig,
                         emit: Emit, signal: AbortSignal, *, skip_initial_steering: bool = False) -> list[AgentMessage]:
    """Run from new prompt messages; returns every new message of this run, in order."""
    context.messages = [*context.messages, *prompts]
    new_messages: list[AgentMessage] = list(prompts)
    await emit(AgentEvent("agent_start"))
    await emit(AgentEvent("turn_start"))
    for prompt in prompts:
        await emit(AgentEvent("message_start", message=prompt))
        await emit(AgentEvent("message_end", message=prompt))
    await _run(context, new_messages, config, emit, signal, skip_initial_steering)
    return new_messages


async def run_agent_loop_continue(context: AgentContext, config: LoopConfig, emit: Emit,
                                  signal: AbortSignal) -> list[AgentMessage]:
    """Continue from the current transcript (its last message must not be an assistant message)."""
    if not context.messages:
        raise ValueError("Cannot continue: no messages in context")
    if isinstance(context.messages[-1], AssistantMessage):
        raise ValueError("Cannot continue from message role: assistant")  # noqa: TRY004 - a state error (Pi's text)
    new_messages: list[AgentMessage] = []
    await emit(AgentEvent("agent_start"))
    await emit(AgentEvent("turn_start"))
    await _run(context, new_messages, config, emit, signal, False)
    return new_messages


async def _run(context: AgentContext, new_messages: list[AgentMessage], config: LoopConfig, emit: Emit,
               signal: AbortSignal, skip_initial_steering: bool) -> None:
    pending = [] if skip_initial_steering else _poll(config.get_steering_messages)
    first = True
    while True:
        has_tool_calls = True
        while has_tool_calls or pending:
            if not first:
                await emit(AgentEvent("turn_start"))
            first = False
            for message in pending:
                await emit(AgentEvent("message_start", message=message))
                await emit(AgentEvent("message_end", message=message))
                context.messages.append(message)
                new_messages.append(message)
            pending = []
            if config.get_tools is not None:
                context.tools = list(config.get_tools())

            assistant = await stream_assistant_response(context, config, emit, signal)
            new_messages.append(assistant)
            if assistant.stop_reason in ("error", "aborted"):
                await emit(AgentEvent("turn_end", message=assistant, tool_results=[]))
                await emit(AgentEvent("agent_end", messages=new_messages))
                return

            tool_calls = assistant.tool_calls()
            has_tool_calls = bool(tool_calls)
            results: list[ToolResultMessage] = []
            terminate = False
            if tool_calls:
                results, terminate = await execute_tool_calls(context, assistant, tool_calls, config, emit, signal)
                context.messages.extend(results)
                new_messages.extend(results)
            await emit(AgentEvent("turn_end", message=assistant, tool_results=results))

            if config.should_stop_after_turn and config.should_stop_after_turn(
                {"message": assistant, "tool_results": results, "context": context, "new_messages": new_messages}
            ):
                await emit(AgentEvent("agent_end", messages=new_messages))
                return
            if terminate:
                has_tool_calls = False
            pending = _poll(config.get_steering_messages)

        follow_ups = _poll(config.get_follow_up_messages)
        if not follow_ups:
            break
        pending = follow_ups
    await emit(AgentEvent("agent_end", messages=new_messages))


def _poll(getter: Callable[[], list[AgentMessage]] | None) -> list[AgentMessage]:
    return list(getter()) if getter else []


# --- streaming ------------------------------------------------------------------------------------


async def stream_assistant_response(context: AgentContext, config: LoopConfig, emit: Emit,
                                    signal: AbortSignal) -> AssistantMessage:
    if signal.aborted:
        # After an abort (docs/loop.md#abort) no request goes out, whatever the provider would do:
        # the run ends with an aborted reply, as Pi records it.
        return await _aborted_reply(context, config, emit)
    messages = context.messages
    if config.transform_context is not None:
        messages = await _maybe_await(config.transform_context(messages, signal))
        if signal.aborted:
            return await _aborted_reply(context, config, emit)
    # model_construct: the history is typed messages already; validating the whole list again on every
    # turn made a turn's cost grow with the length of the conversation.
    llm_context = Context.model_construct(
        system_prompt=context.system_prompt,
        messages=config.convert_to_llm(messages),
        tools=[tool.definition() for tool in context.tools] or None,
    )
    api_key = config.options.api_key
    if config.get_api_key is not None:
        api_key = (await _maybe_await(config.get_api_key(config.model.provider))) or api_key
    options = replace(config.options, signal=signal, api_key=api_key)

    partial: AssistantMessage | None = None
    final: AssistantMessage | None = None
    async for event in config.stream_fn(config.model, llm_context, options):
        if event.type == "start":
            partial = event.partial
            context.messages.append(partial)  # type: ignore[arg-type]
            # The start is announced as it was when the stream began (Pi: no content, zero usage), even
            # when a provider or the retry layer hands it over only after the first deltas.
            started = partial.model_copy(update={"content": [], "usage": Usage.model_construct(total_tokens=0)})  # type: ignore[union-attr]
            await emit(AgentEvent("message_start", message=started))
        elif event.type in ("done", "error"):
            final = event.final
        elif partial is not None:
            partial = event.partial or partial
            context.messages[-1] = partial
            await emit(AgentEvent("message_update", message=partial.model_copy(), assistant_message_event=event))
    if final is None:
        final = partial or AssistantMessage(
            api=config.model.api, provider=config.model.provider, model=config.model.id,
            stop_reason="aborted" if signal.aborted else "error",
            error_message=ABORTED_TEXT if signal.aborted else "Provider stream ended without a result",
        )
    final.make_encodable()
    if partial is not None:
        context.messages[-1] = final
    else:
        context.messages.append(final)
        await emit(AgentEvent("message_start", message=final))
    await emit(AgentEvent("message_end", message=final))
    return final


async def _aborted_reply(context: AgentContext, config: LoopConfig, emit: Emit) -> AssistantMessage:
    model = config.model
    final = AssistantMessage(api=model.api, provider=model.provider, model=model.id, stop_reason="aborted",
                             error_message=ABORTED_TEXT)
    context.messages.append(final)
    await emit(AgentEvent("message_start", message=final))
    await emit(AgentEvent("message_end", message=final))
    return final


# --- tool execution -------------------------------------------------------------------------------


@dataclass(eq=False, repr=False)
class _Prepared:
    """One tool call of a batch, from its arguments to its result."""

    call: ToolCall
    tool: Tool | None = None
    args: Any = None
    info: ToolCallInfo | None = None
    result: ToolResult | None = None
    is_error: bool = False
    message: ToolResultMessage | None = None
    duration_ms: int | None = None  # how long ``execute`` took; None when the tool did not run


def _error_result(message: str) -> ToolResult:
    return ToolResult(content=[TextContent(text=message)], details={})


def _exception_text(err: BaseException) -> str:
    return str(err) or type(err).__name__


async def execute_tool_calls(context: AgentContext, assistant: AssistantMessage, calls: list[ToolCall],
                             config: LoopConfig, emit: Emit,
                             signal: AbortSignal) -> tuple[list[ToolResultMessage], bool]:
    """Run one assistant message's tool calls; result messages come back in the assistant's order."""
    if assistant.stop_reason == "length":
        results = []
        for call in calls:
            await emit(AgentEvent("tool_execution_start", tool_call_id=call.id, tool_name=call.name, args=call.arguments))
            prepared = _Prepared(call, result=_error_result(LENGTH_STOP_TEXT.format(name=call.name)), is_error=True)
            results.append(await _finish(prepared, emit))
        return results, False

    tools = {tool.name: tool for tool in context.tools}
    sequential = config.tool_execution == "sequential" or any(
        tools[c.name].execution_mode == "sequential" for c in calls if c.name in tools)
    prepared_calls: list[_Prepared] = []
    if sequential:
        for call in calls:
            prepared = await _prepare(call, tools, assistant, config, emit, signal)
            if prepared.result is None:
                await _execute(prepared, config, emit, signal)
            prepared_calls.append(prepared)
            await _emit_end(prepared, emit)
            await _emit_message(prepared, emit)
    else:
        for call in calls:
            prepared = await _prepare(call, tools, assistant, config, emit, signal)
            if prepared.result is not None:
                await _emit_end(prepared, emit)
            prepared_calls.append(prepared)

        async def run(prepared: _Prepared) -> None:
            await _execute(prepared, config, emit, signal)
            await _emit_end(prepared, emit)

        runnable = [p for p in prepared_calls if p.result is None]
        # A lone call needs no task of its own (gather would make one, and the loop would track it).
        await (run(runnable[0]) if len(runnable) == 1 else asyncio.gather(*map(run, runnable)))
        for prepared in prepared_calls:
            await _emit_message(prepared, emit)
    messages = [p.message for p in prepared_calls if p.message is not None]
    terminate = bool(prepared_calls) and all(p.result is not None and p.result.terminate for p in prepared_calls)
    return messages, terminate


async def _prepare(call: ToolCall, tools: dict[str, Tool], assistant: AssistantMessage | None, config: LoopConfig,
                   emit: Emit, signal: AbortSignal) -> _Prepared:
    await emit(AgentEvent("tool_execution_start", tool_call_id=call.id, tool_name=call.name, args=call.arguments))
    prepared = _Prepared(call)
    if signal.aborted:  # a call after an abort runs neither its hooks nor the tool
        prepared.result, prepared.is_error = _error_result(OPERATION_ABORTED_TEXT), True
        return prepared
    try:
        tool = tools.get(call.name)
        if tool is None:
            raise ToolError(f"Tool {call.name} not found")
        prepared.tool = tool
        validated = config.arguments.validate(tool, call)
        info = ToolCallInfo(tool_call_id=call.id, tool_name=call.name, args=validated,
                            raw_arguments=call.arguments, tool=tool, assistant_message=assistant)
        prepared.info = info
        if config.before_tool_call is not None:
            decision: BeforeToolCall | None = await _maybe_await(config.before_tool_call(info, signal))
            if decision is not None and decision.block:
                prepared.result, prepared.is_error = _error_result(decision.reason or "Tool execution was blocked"), True
                prepared.result.terminate = decision.terminate
                return prepared
            if decision is not None and decision.args is not None:
                info.args = decision.args
        prepared.args = config.arguments.build(tool, info.args)
    except Exception as err:  # noqa: BLE001 - every preparation failure becomes a result the model reads
        prepared.result, prepared.is_error = _error_result(_exception_text(err)), True
    return prepared


async def _execute(prepared: _Prepared, config: LoopConfig, emit: Emit, signal: AbortSignal) -> None:
    # Imported here: a reply without tool calls never loads it.
    from pi_core.tool_updates import PartialResults

    tool, call = prepared.tool, prepared.call
    assert tool is not None
    updates = PartialResults(asyncio.get_running_loop(), emit, call)
    ctx = ToolContext(cwd=config.cwd, call_id=call.id, signal=signal, on_update=updates.offer, model=config.model,
                      settings=config.tool_settings, pi=config.extension,
                      call_tool=_nested_calls(prepared, config, emit))
    started = time.monotonic()
    try:
        if inspect.iscoroutinefunction(tool.execute):
            outcome = await tool.execute(prepared.args, ctx)
        else:
            inline = tool.quick is not None and tool.quick(prepared.args, ctx)
            outcome = tool.execute(prepared.args, ctx) if inline else await asyncio.to_thread(tool.execute, prepared.args, ctx)
            outcome = await _maybe_await(outcome)
        prepared.result = ToolResult.text(outcome) if isinstance(outcome, str) else outcome
        prepared.is_error = prepared.result.is_error
    except Exception as err:  # a failing tool is reported to the model, not raised
        if not isinstance(err, ToolError):
            import logging

            logging.getLogger("pi").debug("tool %s raised", call.name, exc_info=err)
        prepared.result, prepared.is_error = _error_result(_exception_text(err)), True
        prepared.result.structured_content = getattr(err, "structured_content", None)
    prepared.duration_ms = round((time.monotonic() - started) * 1000)
    await updates.close()
    if config.after_tool_call is not None and prepared.info is not None:
        try:
            override: AfterToolCall | None = await _maybe_await(
                config.after_tool_call(prepared.info, prepared.result, prepared.is_error, signal))
        except Exception as err:  # noqa: BLE001 - docs/loop.md#tool-execution: the hook's error becomes the result
            prepared.result, prepared.is_error = _error_result(_exception_text(err)), True
            return
        if override is not None:
            result = prepared.result
            prepared.result = ToolResult(
                content=override.content if override.content is not None else result.content,
                details=override.details if override.details is not None else result.details,
                terminate=override.terminate if override.terminate is not None else result.terminate,
                # New content makes the old data stale (Pi drops it too).
                structured_content=result.structured_content if override.content is None else None,
            )
            if override.is_error is not None:
                prepared.is_error = override.is_error


def _nested_calls(parent: _Prepared, config: LoopConfig, emit: Emit) -> NestedCall:
    """``ToolContext.call_tool``: another tool called from inside this one (codemode's scripts), run as the model's
    call would be (validation, the before/after hooks), with id ``<parent>/<n>`` and ``tool_execution_*`` events
    marked with ``parent_tool_call_id``. Its result reaches the caller only, not the session."""
    count = itertools.count(1)

    async def nested_emit(event: AgentEvent) -> None:
        await emit(AgentEvent(event.type, **event.fields, parent_tool_call_id=parent.call.id))

    async def run(tool: Tool, args: dict[str, Any], signal: AbortSignal) -> tuple[str, ToolResult, bool]:
        call = ToolCall(id=f"{parent.call.id}/{next(count)}", name=tool.name, arguments=args)
        assert parent.info is not None  # the calling tool got past its own preparation
        prepared = await _prepare(call, {tool.name: tool}, parent.info.assistant_message, config, nested_emit, signal)
        if prepared.result is None:
            await _execute(prepared, config, nested_emit, signal)
        await _emit_end(prepared, nested_emit)
        assert prepared.result is not None
        return call.id, prepared.result, prepared.is_error

    return run


async def _emit_end(prepared: _Prepared, emit: Emit) -> None:
    assert prepared.result is not None
    result = prepared.result = prepared.result.encodable()
    await emit(AgentEvent("tool_execution_end", tool_call_id=prepared.call.id, tool_name=prepared.call.name,
                          result=_result_fields(result), is_error=prepared.is_error, duration_ms=prepared.duration_ms))


def _result_fields(result: ToolResult) -> dict[str, Any]:
    """Content, then details and structured content when there are any (Pi's events carry no ``details: null``)."""
    fields = {"content": result.content, "details": result.details, "structuredContent": result.structured_content}
    return {key: value for key, value in fields.items() if key == "content" or value is not None}


def _to_message(prepared: _Prepared) -> ToolResultMessage:
    result = prepared.result
    assert result is not None
    return ToolResultMessage(tool_call_id=prepared.call.id, tool_name=prepared.call.name,
                             content=list(result.content), details=result.details, is_error=prepared.is_error)


async def _emit_message(prepared: _Prepared, emit: Emit) -> None:
    message = prepared.message = _to_message(prepared)
    await emit(AgentEvent("message_start", message=message))
    await emit(AgentEvent("message_end", message=message))


async def _finish(prepared: _Prepared, emit: Emit) -> ToolResultMessage:
    await _emit_end(prepared, emit)
    await _emit_message(prepared, emit)
    assert prepared.message is not None
    return prepared.message
