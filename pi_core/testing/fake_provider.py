"""An in-process provider that replays scripted replies: the fastest way to test a loop or a tool pack.

``FakeProvider(reply("hi"), reply(tool_calls=[("read", {"path": "a"})]))`` streams each reply in turn
with the real event order (start, block start/delta/end, done) and records every Context it was sent.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator
from typing import Any

from pi_core.providers import StreamOptions
from pi_core.types import AssistantMessage, AssistantMessageEvent, Context, Model

# isort: split
from pi_core.types import TextContent, ThinkingContent, ToolCall

_ids = itertools.count(1)


def reply(text: str = "", *, thinking: str = "", tool_calls: list[tuple[str, dict[str, Any]]] = (),  # type: ignore[assignment]  # open: the model's tool arguments, JSON
          stop_reason: str | None = None, error: str | None = None) -> AssistantMessage:
    """Build a scripted assistant reply."""
    content: list[Any] = []
    if thinking:
        content.append(ThinkingContent(thinking=thinking))
    if text:
        content.append(TextContent(text=text))
    for name, arguments in tool_calls:
        content.append(ToolCall(id=f"call_{next(_ids)}", name=name, arguments=arguments))
    reason = stop_reason or ("error" if error else "toolUse" if tool_calls else "stop")
    return AssistantMessage(content=content, stop_reason=reason, error_message=error)  # type: ignore[arg-type]


class FakeProvider:
    api = "fake"
    name = "fake"

    def __init__(self, *replies: AssistantMessage, delay: float = 0.0) -> None:
        self.replies = list(replies)
        self.contexts: list[Context] = []
        self.options: list[StreamOptions] = []
        self.delay = delay

    async def stream(self, model: Model, context: Context, options: StreamOptions) -> AsyncIterator[AssistantMessageEvent]:
        self.contexts.append(context)
        self.options.append(options)
        base: dict[str, Any] = {"api": model.api, "provider": model.provider, "model": model.id}
        if options.signal.aborted:
            failed = AssistantMessage(**base, stop_reason="aborted", error_message="Request was aborted")
            yield AssistantMessageEvent(type="error", reason="aborted", error=failed)
            return
        if not self.replies:
            failed = AssistantMessage(**base, stop_reason="error", error_message="FakeProvider: no reply scripted")
            yield AssistantMessageEvent(type="error", reason="error", error=failed)
            return
        script = self.replies.pop(0)
        partial = AssistantMessage(**base)
        yield AssistantMessageEvent(type="start", partial=partial)
        for index, block in enumerate(script.content):
            if self.delay:
                await asyncio.sleep(self.delay)
            if options.signal.aborted:
                partial.stop_reason, partial.error_message = "aborted", "Request was aborted"
                yield AssistantMessageEvent(type="error", reason="aborted", error=partial)
                return
            partial.content.append(block.model_copy())
            kind = {"text": "text", "thinking": "thinking", "toolCall": "toolcall"}[block.type]
            yield AssistantMessageEvent(type=f"{kind}_start", content_index=index, partial=partial)  # type: ignore[arg-type]
            if isinstance(block, ToolCall):
                yield AssistantMessageEvent(type="toolcall_end", content_index=index, tool_call=block, partial=partial)
            else:
                text = block.text if isinstance(block, TextContent) else block.thinking
                yield AssistantMessageEvent(type=f"{kind}_delta", content_index=index, delta=text, partial=partial)  # type: ignore[arg-type]
                yield AssistantMessageEvent(type=f"{kind}_end", content_index=index, content=text, partial=partial)  # type: ignore[arg-type]
        partial.stop_reason = script.stop_reason
        partial.error_message = script.error_message
        partial.usage = script.usage
        if script.stop_reason in ("error", "aborted"):
            yield AssistantMessageEvent(type="error", reason=script.stop_reason, error=partial)
        else:
            yield AssistantMessageEvent(type="done", reason=script.stop_reason, message=partial)
