"""Agent: the stateful wrapper around the loop (docs/loop.md#agent).

Owns the transcript, the steering and follow-up queues, the abort signal and the listeners. A run is one run:
retrying a failed one is the session's (``pi_core.session.retry``).
Listeners are awaited in subscription order, after the state has been updated for the event.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

from pi_core.events import AgentEvent
from pi_core.loop import (
    AgentContext,
    LoopConfig,
    StreamFn,
    default_convert_to_llm,
    run_agent_loop,
    run_agent_loop_continue,
)
from pi_core.providers import StreamOptions
from pi_core.signals import AbortSignal
from pi_core.tools import UNCHECKED, ArgumentCheck, Tool, ToolSettings
from pi_core.types import (
    PLACEHOLDER_MODEL,
    AgentMessage,
    AssistantMessage,
    ImageContent,
    Message,
    Model,
    TextContent,
    UserMessage,
)

if TYPE_CHECKING:
    from pi_core.extension import ExtensionContext

Listener = Callable[[AgentEvent, AbortSignal | None], Awaitable[None] | None]
QueueMode = Literal["one-at-a-time", "all"]


@dataclass(eq=False, repr=False)
class AgentState:
    """The agent's state: prompt, model, tools, messages and the running turn."""

    system_prompt: str = ""
    model: Model = field(default_factory=lambda: PLACEHOLDER_MODEL)
    thinking_level: str = "off"
    tools: list[Tool] = field(default_factory=list)
    messages: list[AgentMessage] = field(default_factory=list)
    is_streaming: bool = False
    streaming_message: AgentMessage | None = None
    pending_tool_calls: frozenset[str] = frozenset()
    error_message: str | None = None

    def __setattr__(self, name: str, value: object) -> None:
        if name in ("tools", "messages"):
            value = list(cast("Iterable[object]", value))  # assigning stores a shallow copy (docs/loop.md#agent)
        object.__setattr__(self, name, value)


class Agent:
    def __init__(
        self,
        *,
        stream_fn: StreamFn | None = None,
        system_prompt: str = "",
        model: Model | None = None,
        thinking_level: str = "off",
        tools: list[Tool] | None = None,
        messages: list[AgentMessage] | None = None,
        convert_to_llm: Callable[[list[AgentMessage]], list[Message]] = default_convert_to_llm,
        transform_context: Callable[..., object] | None = None,
        steering_mode: QueueMode = "one-at-a-time",
        follow_up_mode: QueueMode = "one-at-a-time",
        tool_execution: Literal["parallel", "sequential"] = "parallel",
        before_tool_call: Callable[..., object] | None = None,
        after_tool_call: Callable[..., object] | None = None,
        get_api_key: Callable[[str], object] | None = None,
        session_id: str | Callable[[], str] | None = None,
        options: StreamOptions | None = None,
        cwd: Path | None = None,
        tool_settings: ToolSettings | None = None,
        arguments: ArgumentCheck = UNCHECKED,
    ) -> None:
        self.state = AgentState(system_prompt=system_prompt, model=model or PLACEHOLDER_MODEL,
                                thinking_level=thinking_level, tools=tools or [], messages=messages or [])
        self.stream_fn = stream_fn
        self.convert_to_llm = convert_to_llm
        self.transform_context = transform_context
        self.steering_mode: QueueMode = steering_mode
        self.follow_up_mode: QueueMode = follow_up_mode
        self.tool_execution = tool_execution
        self.before_tool_call = before_tool_call
        self.after_tool_call = after_tool_call
        self.get_api_key = get_api_key
        self.session_id = session_id
        self.options = options or StreamOptions()
        self.cwd = cwd or Path.cwd()
        self.tool_settings = tool_settings or ToolSettings()
        self.arguments = arguments  # how tool-call arguments are checked (pi_core.tools.ArgumentCheck)
        self.extension: ExtensionContext | None = None  # what tools see as ctx.pi; set by AgentSession
        self._listeners: list[Listener] = []
        self._steering: list[AgentMessage] = []
        self._follow_up: list[AgentMessage] = []
        self._signal: AbortSignal | None = None
        self._idle = asyncio.Event()
        self._idle.set()

    # --- queues -----------------------------------------------------------------------------------

    def steer(self, message: AgentMessage | str) -> None:
        self._steering.append(_as_message(message))

    def follow_up(self, message: AgentMessage | str) -> None:
        self._follow_up.append(_as_message(message))

    def clear_steering_queue(self) -> None:
        self._steering.clear()

    def clear_follow_up_queue(self) -> None:
        self._follow_up.clear()

    def clear_all_queues(self) -> None:
        self._steering.clear()
        self._follow_up.clear()

    def has_queued_messages(self) -> bool:
        return bool(self._steering or self._follow_up)

    @property
    def steering_queue(self) -> list[AgentMessage]:
        return list(self._steering)

    @property
    def follow_up_queue(self) -> list[AgentMessage]:
        return list(self._follow_up)

    def _drain(self, queue: list[AgentMessage], mode: QueueMode) -> list[AgentMessage]:
        if not queue:
            return []
        if mode == "all":
            taken = list(queue)
            queue.clear()
            return taken
        return [queue.pop(0)]

    # --- listeners --------------------------------------------------------------------------------

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    async def emit(self, event: AgentEvent) -> None:
        """Update the state for ``event``, then await each listener in turn (the loop announces through it)."""
        self._reduce(event)
        for listener in list(self._listeners):
            outcome = listener(event, self._signal)
            if inspect.isawaitable(outcome):
                await outcome

    def _reduce(self, event: AgentEvent) -> None:
        state = self.state
        kind = event.type
        if kind in ("message_start", "message_update"):
            state.streaming_message = event.message
        elif kind == "message_end":
            state.streaming_message = None
            state.messages.append(event.message)
        elif kind == "tool_execution_start":
            state.pending_tool_calls = state.pending_tool_calls | {event.tool_call_id}
        elif kind == "tool_execution_end":
            state.pending_tool_calls = state.pending_tool_calls - {event.tool_call_id}
        elif kind == "turn_end":
            message = event.message
            if isinstance(message, AssistantMessage) and message.error_message:
                state.error_message = message.error_message
        elif kind == "agent_end":
            state.streaming_message = None

    # --- running ----------------------------------------------------------------------------------

    @property
    def signal(self) -> AbortSignal | None:
        return self._signal

    def abort(self, reason: str | None = None) -> None:
        if self._signal is not None:
            self._signal.abort(reason)

    async def wait_for_idle(self) -> None:
        await self._idle.wait()

    def reset(self) -> None:
        self.state.messages = []
        self.state.streaming_message = None
        self.state.pending_tool_calls = frozenset()
        self.state.error_message = None
        self.clear_all_queues()

    async def prompt(self, prompt: str | AgentMessage | list[AgentMessage],
                     images: list[ImageContent] | None = None) -> None:
        if self.state.is_streaming:
            raise RuntimeError("Agent is already processing a prompt. Use steer() or followUp() to queue "
                               "messages, or wait for completion.")
        if isinstance(prompt, str):
            content: list[Any] = [TextContent(text=prompt), *(images or [])]
            messages: list[AgentMessage] = [UserMessage(content=content)]
        elif isinstance(prompt, list):
            messages = list(prompt)
        else:
            messages = [prompt]
        await self._run(messages)

    async def continue_(self) -> None:
        if self.state.is_streaming:
            raise RuntimeError("Agent is already processing. Wait for completion before continuing.")
        if not self.state.messages:
            raise RuntimeError("No messages to continue from")
        if isinstance(self.state.messages[-1], AssistantMessage):
            steering = self._drain(self._steering, self.steering_mode)
            if steering:
                await self._run(steering, skip_initial_steering=True)
                return
            follow_ups = self._drain(self._follow_up, self.follow_up_mode)
            if follow_ups:
                await self._run(follow_ups)
                return
            raise RuntimeError("Cannot continue from message role: assistant")
        await self._run(None)

    def last_assistant(self) -> AssistantMessage | None:
        return next((m for m in reversed(self.state.messages) if isinstance(m, AssistantMessage)), None)

    def drop_trailing_error(self) -> None:
        """Take a failed reply off the end of the transcript (before a retry or a continue after compaction)."""
        messages = self.state.messages
        if messages and isinstance(messages[-1], AssistantMessage) and messages[-1].stop_reason == "error":
            self.state.messages = messages[:-1]

    def current_session_id(self) -> str | None:
        """The prompt-cache/session id sent with each request; a callable follows the session file (``/new``)."""
        value = self.session_id() if callable(self.session_id) else self.session_id
        return value or self.options.session_id

    def _config(self) -> LoopConfig:
        if self.stream_fn is None:
            raise RuntimeError("Agent has no stream function: pass stream_fn=...")
        reasoning = None if self.state.thinking_level == "off" else self.state.thinking_level
        options = StreamOptions(**{**self.options.__dict__, "reasoning": reasoning,
                                   "session_id": self.current_session_id()})
        return LoopConfig(
            model=self.state.model, stream_fn=self.stream_fn, convert_to_llm=self.convert_to_llm,
            transform_context=self.transform_context, get_api_key=self.get_api_key,
            get_steering_messages=lambda: self._drain(self._steering, self.steering_mode),
            get_follow_up_messages=lambda: self._drain(self._follow_up, self.follow_up_mode),
            tool_execution=self.tool_execution, before_tool_call=self.before_tool_call,
            after_tool_call=self.after_tool_call, options=options, cwd=self.cwd,
            tool_settings=self.tool_settings, extension=self.extension,
            get_tools=lambda: self.state.tools, arguments=self.arguments,
        )

    async def _run(self, prompts: list[AgentMessage] | None, *, skip_initial_steering: bool = False) -> None:
        if self.state.is_streaming:
            raise RuntimeError("Agent is already processing.")
        self._signal = signal = AbortSignal()
        self.state.is_streaming = True
        self.state.error_message = None
        self._idle.clear()
        context = AgentContext(self.state.system_prompt, list(self.state.messages), list(self.state.tools))
        try:
            config = self._config()
            if prompts is None:
                await run_agent_loop_continue(context, config, self.emit, signal)
            else:
                await run_agent_loop(prompts, context, config, self.emit, signal,
                                     skip_initial_steering=skip_initial_steering)
        except Exception as err:  # noqa: BLE001 - a contract violation ends the run with an error message
            model = self.state.model
            failed = AssistantMessage(
                content=[TextContent(text="")], api=model.api, provider=model.provider, model=model.id,
                stop_reason="aborted" if signal.aborted else "error", error_message=str(err) or type(err).__name__)
            self.state.messages.append(failed)
            self.state.error_message = failed.error_message
            await self.emit(AgentEvent("agent_end", messages=[failed]))
        finally:
            self.state.is_streaming = False
            self.state.streaming_message = None
            self.state.pending_tool_calls = frozenset()
            self._signal = None
            self._idle.set()


def _as_message(message: AgentMessage | str) -> AgentMessage:
    if isinstance(message, str):
        return UserMessage(content=[TextContent(text=message)])
    return message
