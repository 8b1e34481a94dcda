"""LoopHooks: where a session's runs ask the plugins, and how their answers combine.

Input (``pi_input`` may transform or handle it), the start of a run (``pi_before_agent_start`` may add
messages and change the system prompt), tool calls (``pi_before_tool_call`` may block or change the arguments, ``pi_after_tool_call`` may change the
result), the context (``pi_context``), provider requests, headers, responses and stream events, and
compaction (``pi_session_before_compact``). Each goes through ``PluginSet.call`` with the session's context;
a hook no plugin implements costs nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypedDict, cast

from pi_core.errors import ToolError
from pi_core.extension import ExtensionContext
from pi_core.hookspecs.results import (
    AfterToolCall,
    BeforeToolCall,
    Cancel,
    CompactionPreparation,
    CompactionResult,
    SystemPromptOptions,
)
from pi_core.registry import PluginSet
from pi_core.signals import AbortSignal
from pi_core.tools import ToolCallInfo, ToolResult
from pi_core.types import AgentMessage, CustomMessage, ImageContent, Model


class ProviderHooks(TypedDict, total=False):
    """The ``StreamOptions`` callbacks ``LoopHooks.stream_options`` sets: those some plugin implements."""

    on_payload: Callable[[dict[str, Any], Model], object]  # open: the provider's JSON request body
    on_headers: Callable[[dict[str, str | None], Model], object]
    on_response: Callable[[dict[str, Any], Model], object]  # open: the provider's response status and headers
    on_stream_event: Callable[[Any, Model], object]  # open: one decoded wire event, the provider's JSON


class LoopHooks:
    """The session's plugin calls around a run, and the callbacks an Agent and its StreamOptions take."""

    def __init__(self, plugins: PluginSet, ctx: ExtensionContext) -> None:
        self.plugins = plugins
        self.ctx = ctx

    async def _call(self, hook: str, /, **kwargs: Any) -> Any:
        return await self.plugins.call(hook, ctx=self.ctx, **kwargs)

    async def input(self, text: str, images: list[ImageContent] | None, *, source: str,
                    streaming_behavior: str | None) -> tuple[str, list[ImageContent] | None] | None:
        """``pi_input``: the text and images to go on with, or None when a plugin handled the input."""
        if not self.plugins.has("pi_input"):
            return text, images
        state: dict[str, Any] = {"images": images, "handled": False}

        def step(current: str, result: Any, args: dict[str, Any]) -> tuple[str, bool]:
            if result.action == "handled":
                state["handled"] = True
                return current, True
            if result.action == "transform" and result.text is not None:
                if result.images is not None:
                    args["images"] = state["images"] = result.images
                return result.text, False
            return current, False

        text = await self._call("pi_input", text=text, source=source, images=images, merge=step,
                                streaming_behavior=streaming_behavior)
        return None if state["handled"] else (text, state["images"])

    async def before_agent_start(self, first: AgentMessage, *, prompt: str, system_prompt: str,
                                 images: list[ImageContent] | None, message_type: str, options: SystemPromptOptions,
                                 rebuild: Callable[[SystemPromptOptions], str | None]) -> tuple[str, list[AgentMessage]]:
        """``pi_before_agent_start``: the system prompt for this run and the messages the plugins add. A plugin
        that edited ``options`` but returned no prompt gets the prompt ``rebuild`` makes from them."""
        extra: list[AgentMessage] = []
        before = _snapshot(options)

        def step(current: str, result: Any, _args: dict[str, Any]) -> tuple[str, bool]:
            if result.message:
                extra.append(custom_message(result.message))
            return result.system_prompt or current, False

        chosen: str = await self._call("pi_before_agent_start", prompt=prompt, system_prompt=system_prompt,
                                       images=images, message_type=message_type,
                                       message=first if message_type == "custom" else None, options=options,
                                       merge=step)
        if chosen == system_prompt and _snapshot(options) != before:
            chosen = rebuild(options) or chosen
        return chosen, extra

    async def before_tool_call(self, info: ToolCallInfo, signal: AbortSignal) -> BeforeToolCall | None:
        if not self.plugins.has("pi_before_tool_call"):
            return None
        decision: list[BeforeToolCall] = []

        def step(call: ToolCallInfo, result: BeforeToolCall, _args: dict[str, Any]) -> tuple[ToolCallInfo, bool]:
            if result.block:
                decision.append(result)
                return call, True
            if result.args is not None:
                call.args = result.args
            return call, False

        def failed(plugin: str, err: BaseException) -> BeforeToolCall:
            if isinstance(err, ToolError):
                return BeforeToolCall(block=True, reason=str(err))
            return BeforeToolCall(block=True, reason=f'Tool call blocked: plugin "{plugin}" failed while checking '
                                                     "it (the user sees the error).")

        await self._call("pi_before_tool_call", call=info, merge=step, on_error=failed, quiet=(ToolError,))
        return decision[0] if decision else None

    async def after_tool_call(self, info: ToolCallInfo, result: ToolResult, is_error: bool,
                              signal: AbortSignal) -> AfterToolCall | None:
        if not self.plugins.has("pi_after_tool_call"):
            return None
        state = {"is_error": is_error}

        def step(current: ToolResult, change: AfterToolCall, args: dict[str, Any]) -> tuple[ToolResult, bool]:
            if change.is_error is not None:
                args["is_error"] = state["is_error"] = change.is_error
            return ToolResult(
                content=change.content if change.content is not None else current.content,
                details=change.details if change.details is not None else current.details,
                terminate=change.terminate if change.terminate is not None else current.terminate), False

        final = await self._call("pi_after_tool_call", call=info, result=result, is_error=is_error, merge=step)
        return AfterToolCall(content=final.content, details=final.details, is_error=state["is_error"],
                             terminate=final.terminate)

    async def transform_context(self, messages: list[AgentMessage], signal: AbortSignal) -> list[AgentMessage]:
        if not self.plugins.has("pi_context"):
            return messages
        return await self._call("pi_context", messages=list(messages))  # type: ignore[no-any-return]

    def stream_options(self) -> ProviderHooks:
        """The StreamOptions callbacks for the provider hooks some plugin implements (none: no cost)."""
        hooks = {"on_payload": ("pi_before_provider_request", self.on_payload),
                 "on_headers": ("pi_before_provider_headers", self.on_headers),
                 "on_response": ("pi_after_provider_response", self.on_response),
                 "on_stream_event": ("pi_provider_stream_event", self.on_stream_event)}
        return cast("ProviderHooks", {option: callback for option, (hook, callback) in hooks.items()
                                      if self.plugins.has(hook)})

    async def on_payload(self, payload: dict[str, Any], model: Model) -> dict[str, Any] | None:  # open: the provider's JSON request body
        replaced = await self._call("pi_before_provider_request", payload=payload, model=model)
        return None if replaced is payload else replaced

    async def on_headers(self, headers: dict[str, str | None], model: Model) -> None:
        await self._call("pi_before_provider_headers", headers=headers, model=model)

    async def on_response(self, info: dict[str, Any], model: Model) -> None:  # open: the provider's response info, JSON
        await self._call("pi_after_provider_response", status=info.get("status", 0),
                         headers=dict(info.get("headers") or {}), model=model)

    async def on_stream_event(self, data: Any, model: Model) -> None:  # open: one decoded wire event, the provider's JSON
        await self._call("pi_provider_stream_event", data=data, model=model)

    async def before_compact(self, preparation: CompactionPreparation,
                             branch_entries: list[dict[str, Any]],  # open: session entries as Pi's JSONL records
                             custom_instructions: str | None, reason: str,
                             signal: AbortSignal) -> CompactionResult | Cancel | None:
        if not self.plugins.has("pi_session_before_compact"):
            return None
        from pi_core.hookspecs.entries import entry_from_json

        typed = [entry_from_json(entry) for entry in branch_entries]
        return await self._call("pi_session_before_compact", preparation=preparation, branch_entries=typed,  # type: ignore[no-any-return]
                                custom_instructions=custom_instructions, reason=reason,
                                will_retry=reason == "overflow", signal=signal)


def custom_message(data: dict[str, Any]) -> AgentMessage:  # open: a custom message as Pi's JSON
    """A plugin's ``{customType, content, display, details}`` as a message (None fields left out)."""
    return CustomMessage(role="custom", **{k: v for k, v in data.items() if v is not None})


def _snapshot(options: SystemPromptOptions) -> tuple[Any, ...]:
    return (list(options.selected_tools), dict(options.sections), list(options.append_system_prompt),
            options.custom_prompt)
