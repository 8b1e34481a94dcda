"""Hooks of a run: the user's input, the start of a run, every agent event, the context of each model call."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pi_core.hookspecs.markers import spec

if TYPE_CHECKING:
    from pi_core.events import AgentEvent
    from pi_core.extension import ExtensionContext
    from pi_core.hookspecs.results import (
        BeforeAgentStart,
        InputResult,
        SystemPromptOptions,
    )
    from pi_core.types import AgentMessage, ImageContent

__all__ = ["pi_agent_event", "pi_before_agent_start", "pi_context", "pi_input"]


@spec("chain", chain="text")
def pi_input(ctx: ExtensionContext, text: str, source: str, images: list[ImageContent] | None = None,
             streaming_behavior: str | None = None) -> InputResult | None:
    """A prompt arrived, after plugin ``/commands`` were checked and before templates and skills expand.

    Once per prompt. ``source`` is "interactive", "rpc", "print" or "extension" (``ctx.send_user_message``);
    ``streaming_behavior`` is "steer" / "followUp" while a run streams, else None. Return
    ``InputResult("transform", text=..., images=...)`` to rewrite it (later plugins see the new text) or
    ``InputResult("handled")`` to stop: nothing is sent to the model. A raising implementation is reported
    and the text passes on unchanged.
    """


@spec("chain", chain="system_prompt")
def pi_before_agent_start(ctx: ExtensionContext, prompt: str, system_prompt: str,
                          images: list[ImageContent] | None = None, message_type: str = "user",
                          message: AgentMessage | None = None,
                          options: SystemPromptOptions | None = None) -> BeforeAgentStart | None:
    """A run is about to start: once per user prompt, or per custom message sent with ``trigger_turn=True``
    (then ``message_type`` is "custom", ``message`` is that message and ``prompt`` is "").

    Return ``BeforeAgentStart(message=...)`` to add a custom message to this prompt (every plugin's are
    kept) and/or ``BeforeAgentStart(system_prompt=...)`` to replace the system prompt for this run; the next
    implementation receives the replaced prompt. Editing ``options`` in place (``sections``,
    ``selected_tools``, ...) rebuilds the prompt from them. A raising implementation is reported and ignored.
    """


@spec("notify")
def pi_agent_event(ctx: ExtensionContext, event: AgentEvent) -> None:
    """Observe every session event, in order: agent_start, agent_end, agent_settled (the session is idle;
    ``aborted``), turn_start, turn_end, message_start/update/end, tool_execution_start/update/end,
    queue_update, compaction_start/end, auto_retry_start/end, session_info_changed.

    Each implementation is awaited before the next event, so a slow one delays the run. Results are
    ignored; a raising implementation is reported and the run goes on.
    """


@spec("chain", chain="messages")
def pi_context(ctx: ExtensionContext, messages: list[AgentMessage]) -> list[AgentMessage] | None:
    """Rewrite the messages of one model request: before every model call of a run, on a copy.

    Return a new list (later implementations get it) or None to keep the list. The session's stored
    history is never changed. A raising implementation is reported and the previous list is kept.
    """
