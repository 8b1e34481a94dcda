"""pi's session events as ACP ``session/update`` notifications, and a session file's history replayed as them.

Streamed text and thinking become message and thought chunks; each tool call becomes a ``tool_call`` (kind,
title, the files it touches) when the model has written it, ``in_progress`` when it runs, and ends
``completed`` or ``failed`` with its output: edit and write as a diff of the whole file, bash as the client's
terminal when it ran there. A todo list in a tool result's details (the todo example's) becomes the plan.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from typing import Any

from acp import helpers, schema
from pi_plugins.acp.ui import CURRENT_CALL

from pi_core.events import AgentEvent
from pi_core.types import (
    AssistantMessage,
    ImageContent,
    TextContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

Send = Callable[[Any], Awaitable[None]]
Snapshot = Callable[[str], Awaitable[str | None]]  # a file's text as the editor has it, None if unreadable

KINDS: dict[str, schema.ToolKind] = {
    "read": "read", "edit": "edit", "write": "edit", "bash": "execute", "powershell": "execute",
    "grep": "search", "find": "search", "ls": "search", "tool_search": "search", "web_fetch": "fetch",
    "web_search": "fetch", "todo": "think",
}
DIFF_TOOLS = frozenset({"edit", "write"})
TITLE_CHARS = 80


def tool_kind(name: str) -> schema.ToolKind:
    return KINDS.get(name, "other")


def tool_title(name: str, args: dict[str, Any]) -> str:
    """``bash: ls -la``, ``read src/app.py``, ``grep TODO``: what the call does, in one short line."""
    detail = next((args[key] for key in ("command", "path", "pattern", "query", "url", "action")
                   if isinstance(args.get(key), str) and args[key].strip()), "")
    detail = " ".join(str(detail).split())
    if len(detail) > TITLE_CHARS:
        detail = detail[:TITLE_CHARS - 1] + "…"
    if not detail:
        return name
    return f"{name}: {detail}" if name in ("bash", "powershell") else f"{name} {detail}"


def tool_path(args: dict[str, Any], cwd: str) -> str | None:
    path = args.get("path") if isinstance(args, dict) else None
    if not isinstance(path, str) or not path.strip() or "\x00" in path:
        return None
    return os.path.normpath(os.path.join(cwd, os.path.expanduser(path)))


def locations(args: dict[str, Any], cwd: str) -> list[schema.ToolCallLocation] | None:
    path = tool_path(args, cwd)
    if path is None:
        return None
    offset = args.get("offset")
    line = int(offset) if isinstance(offset, (int, float)) and not isinstance(offset, bool) and offset >= 1 else None
    return [schema.ToolCallLocation(path=path, line=line)]


def result_content(blocks: list[Any]) -> list[Any]:
    out: list[Any] = []
    for block in blocks:
        kind = _get(block, "type")
        if kind == "text" and _get(block, "text"):
            out.append(helpers.tool_content(helpers.text_block(str(_get(block, "text")))))
        elif kind == "image" and _get(block, "data"):
            out.append(helpers.tool_content(helpers.image_block(str(_get(block, "data")),
                                                                str(_get(block, "mimeType") or _get(block, "mime_type")))))
    return out


def plan_of(details: Any) -> schema.AgentPlanUpdate | None:
    """The plan a todo tool's result carries (``details.todos``: ``{text, done}`` items), or None."""
    todos = details.get("todos") if isinstance(details, dict) else None
    if not isinstance(todos, list):
        return None
    entries = [helpers.plan_entry(str(t.get("text") or ""), status="completed" if t.get("done") else "pending")
               for t in todos if isinstance(t, dict) and t.get("text")]
    return helpers.update_plan(entries)


def _get(value: Any, name: str) -> Any:
    return value.get(name) if isinstance(value, dict) else getattr(value, name, None)


class EventTranslator:
    """Follows one session's events and sends the client what it shows of them."""

    def __init__(self, send: Send, cwd: str, snapshot: Snapshot) -> None:
        self.send = send
        self.cwd = cwd
        self.snapshot = snapshot
        self.started: set[str] = set()
        self.terminals: dict[str, str] = {}  # tool call id -> the client terminal its command ran in
        self._before: dict[str, tuple[str, str | None]] = {}  # edit/write call id -> (path, its text before)

    async def on_event(self, event: AgentEvent) -> None:
        kind = event.type
        if event.get("parent_tool_call_id"):
            return  # a call made from inside a tool (codemode) is part of its caller's tool call
        if kind == "message_update":
            await self._on_stream(event.get("assistant_message_event"))
        elif kind == "tool_execution_start":
            await self._on_tool_start(event.tool_call_id, event.tool_name, event.get("args") or {})
        elif kind == "tool_execution_update":
            await self._on_tool_update(event.tool_call_id, event.get("partial_result"))
        elif kind == "tool_execution_end":
            await self._on_tool_end(event.tool_call_id, event.tool_name, event.get("result") or {},
                                    bool(event.get("is_error")))

    async def _on_stream(self, update: Any) -> None:
        kind = _get(update, "type")
        if kind == "text_delta" and _get(update, "delta"):
            await self.send(helpers.update_agent_message_text(_get(update, "delta")))
        elif kind == "thinking_delta" and _get(update, "delta"):
            await self.send(helpers.update_agent_thought_text(_get(update, "delta")))
        elif kind == "toolcall_end":
            call = _get(update, "tool_call") or _get(update, "toolCall")
            if call is not None:
                await self.start_call(_get(call, "id"), _get(call, "name"), _get(call, "arguments") or {})

    async def start_call(self, call_id: str, name: str, args: dict[str, Any],
                         status: schema.ToolCallStatus = "pending") -> None:
        if call_id in self.started:
            return
        self.started.add(call_id)
        await self.send(helpers.start_tool_call(call_id, tool_title(name, args), kind=tool_kind(name), status=status,
                                                locations=locations(args, self.cwd), raw_input=args))

    async def _on_tool_start(self, call_id: str, name: str, args: dict[str, Any]) -> None:
        CURRENT_CALL.set(call_id)  # the call's permission hooks run next, in this same task
        await self.start_call(call_id, name, args)
        path = tool_path(args, self.cwd)
        if name in DIFF_TOOLS and path is not None:
            self._before[call_id] = (path, await self.snapshot(path))
        await self.send(helpers.update_tool_call(call_id, status="in_progress"))

    async def _on_tool_update(self, call_id: str, partial: Any) -> None:
        if call_id in self.terminals:
            return  # the client shows the live terminal itself
        content = result_content(_get(partial, "content") or [])
        if content:
            await self.send(helpers.update_tool_call(call_id, content=content))

    async def terminal_started(self, call_id: str, terminal_id: str) -> None:
        self.terminals[call_id] = terminal_id
        await self.send(helpers.update_tool_call(call_id, content=[helpers.tool_terminal_ref(terminal_id)]))

    async def _on_tool_end(self, call_id: str, name: str, result: dict[str, Any], is_error: bool) -> None:
        if CURRENT_CALL.get() == call_id:
            CURRENT_CALL.set(None)
        content = result_content(_get(result, "content") or [])
        before = self._before.pop(call_id, None)
        terminal = self.terminals.pop(call_id, None)
        if terminal is not None:
            content = [helpers.tool_terminal_ref(terminal), *content]
        elif not is_error and name in DIFF_TOOLS:
            diff = await self._diff(before)
            if diff is not None:
                content = [diff, *content]
        await self.send(helpers.update_tool_call(call_id, status="failed" if is_error else "completed",
                                                 content=content or None, raw_output=_plain(result)))
        plan = plan_of(_get(result, "details"))
        if plan is not None:
            await self.send(plan)

    async def _diff(self, before: tuple[str, str | None] | None) -> Any:
        if before is None:
            return None
        path, old = before
        new = await self.snapshot(path)
        return helpers.tool_diff_content(path, new, old) if new is not None else None


def _plain(value: Any) -> Any:
    from pi_core.events import to_plain

    return to_plain(value)


async def replay(messages: list[Any], send: Send, cwd: str) -> None:
    """A loaded session's conversation as the updates a client would have seen live (``session/load``)."""
    calls: dict[str, ToolCall] = {}
    for message in messages:
        if isinstance(message, UserMessage):
            said = message.content if isinstance(message.content, list) else [TextContent(text=message.content)]
            for part in said:
                if isinstance(part, TextContent) and part.text:
                    await send(helpers.update_user_message_text(part.text))
                elif isinstance(part, ImageContent):
                    await send(helpers.update_user_message(helpers.image_block(part.data, part.mime_type)))
        elif isinstance(message, AssistantMessage):
            for block in message.content:
                if block.type == "thinking" and block.thinking:  # type: ignore[union-attr]
                    await send(helpers.update_agent_thought_text(block.thinking))  # type: ignore[union-attr]
                elif block.type == "text" and block.text:  # type: ignore[union-attr]
                    await send(helpers.update_agent_message_text(block.text))  # type: ignore[union-attr]
                elif isinstance(block, ToolCall):
                    calls[block.id] = block
                    await send(helpers.start_tool_call(
                        block.id, tool_title(block.name, block.arguments), kind=tool_kind(block.name),
                        status="in_progress", locations=locations(block.arguments, cwd), raw_input=block.arguments))
        elif isinstance(message, ToolResultMessage) and message.tool_call_id in calls:
            await send(helpers.update_tool_call(
                message.tool_call_id, status="failed" if message.is_error else "completed",
                content=result_content(message.content) or None))
            plan = plan_of(message.details)
            if plan is not None:
                await send(plan)
