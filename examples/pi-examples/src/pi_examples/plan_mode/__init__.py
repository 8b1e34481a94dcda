"""plan_mode: a read-only planning mode (``--plan``, ``/plan``, Ctrl+Alt+P) whose numbered plan is then executed
with progress tracked through ``[DONE:n]`` markers (``/todos``, a widget and a footer status).

In plan mode edit and write are switched off, bash runs only allow-listed read-only commands, and each prompt
carries a hidden "[PLAN MODE ACTIVE]" message. When a reply holds a "Plan:" list and someone can answer, the
user picks what next: executing restores the tools and starts a run on the plan. The state is saved as
"plan-mode" session entries, so a resumed session carries on where it was.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pi_core import (
    BeforeAgentStart,
    BeforeToolCall,
    CustomEntry,
    CustomMessageEntry,
    Flag,
    MessageEntry,
    Shortcut,
    SlashCommand,
    hookimpl,
)
from pi_core.events import AgentEvent
from pi_core.extension import CommandContext, ExtensionContext
from pi_core.tools import ToolCallInfo
from pi_core.types import AgentMessage
from pi_examples.plan_mode.utils import (
    TodoItem,
    all_steps_complete,
    extract_todo_items,
    is_safe_command,
    mark_completed_steps,
)

PLAN_MODE_TOOLS = ("read", "bash", "grep", "find", "ls", "questionnaire")
NORMAL_MODE_TOOLS = ("read", "bash", "edit", "write")
PLAN_MODE_DISABLED_TOOLS = frozenset({"edit", "write"})
PLAN_MANAGED_TOOLS = frozenset(PLAN_MODE_TOOLS + NORMAL_MODE_TOOLS)
STATE_ENTRY = "plan-mode"
MARKER = "[PLAN MODE ACTIVE]"

PLAN_CONTEXT = f"""{MARKER}
You are in plan mode - a read-only exploration mode for safe code analysis.

Restrictions:
- Built-in edit and write tools are disabled
- Other currently active tools remain available
- Bash is restricted to an allowlist of read-only commands

Ask clarifying questions using the questionnaire tool.
Use brave-search skill via bash for web research.

Create a detailed numbered plan under a "Plan:" header:

Plan:
1. First step description
2. Second step description
...

Do NOT attempt to make changes - just describe what you would do."""

EXECUTE = "Execute the plan (track progress)"
CHOICES = [EXECUTE, "Stay in plan mode", "Refine the plan"]


@dataclass
class PlanState:
    enabled: bool = False
    executing: bool = False
    todos: list[TodoItem] = field(default_factory=list)
    tools_before: list[str] | None = None  # the active tools when plan mode was entered

    def reset(self, *, enabled: bool) -> None:
        self.enabled, self.executing, self.todos, self.tools_before = enabled, False, [], None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"enabled": self.enabled, "todos": [t.to_json() for t in self.todos],
                                "executing": self.executing}
        if self.tools_before is not None:
            data["toolsBeforePlanMode"] = list(self.tools_before)
        return data


def _field(value: Any, name: str) -> Any:
    """A field of a message or content block, whether it is a typed object (events) or JSON (session entries)."""
    return value.get(name) if isinstance(value, dict) else getattr(value, name, None)


def _is_assistant(message: Any) -> bool:
    return _field(message, "role") == "assistant" and isinstance(_field(message, "content"), list)


def assistant_text(message: Any) -> str:
    """The reply's text and thinking, one block a line: reasoning models often write the plan or the
    [DONE:n] markers in their thinking."""
    parts = []
    for block in _field(message, "content"):
        kind = _field(block, "type")
        parts.append(str(_field(block, kind) or "") if kind in ("text", "thinking") else "")
    return "\n".join(parts)


def _last_assistant(messages: list[Any]) -> Any:
    return next((m for m in reversed(messages) if _is_assistant(m)), None)


def _unique(names: list[str]) -> list[str]:
    return list(dict.fromkeys(names))


def _is_stale_plan_context(message: AgentMessage) -> bool:
    if getattr(message, "customType", None) == "plan-mode-context":
        return True
    if _field(message, "role") != "user":
        return False
    content = _field(message, "content")
    if isinstance(content, str):
        return MARKER in content
    return isinstance(content, list) and any(
        _field(block, "type") == "text" and MARKER in str(_field(block, "text") or "") for block in content)


class PlanMode:
    """A class plugin: plan mode, the plan's steps and the tools it replaced are this session's (one instance per
    session)."""

    def __init__(self) -> None:
        self.state = PlanState()

    # --- display and persistence ----------------------------------------------------------------------------------

    def update_status(self, ctx: ExtensionContext) -> None:
        theme = ctx.ui.theme
        tracking = self.state.executing and bool(self.state.todos)
        if tracking:
            done = sum(t.completed for t in self.state.todos)
            ctx.ui.set_status("plan-mode", theme.fg("accent", f"📋 {done}/{len(self.state.todos)}"))
        elif self.state.enabled:
            ctx.ui.set_status("plan-mode", theme.fg("warning", "⏸ plan"))
        else:
            ctx.ui.set_status("plan-mode", None)
        if not tracking:
            ctx.ui.set_widget("plan-todos", None)
            return
        lines = []
        for item in self.state.todos:
            text = item.text if len(item.text) <= 60 else f"{item.text[:57]}..."
            if item.completed:
                lines.append(theme.fg("success", "☑ ") + theme.fg("muted", theme.strikethrough(text)))
            else:
                lines.append(theme.fg("muted", "☐ ") + text)
        ctx.ui.set_widget("plan-todos", lines)

    def persist(self, ctx: ExtensionContext) -> None:
        ctx.append_entry(STATE_ENTRY, self.state.to_json())

    # --- switching tools ------------------------------------------------------------------------------------------

    def enter_plan_tools(self, ctx: ExtensionContext) -> None:
        if self.state.tools_before is None:
            self.state.tools_before = ctx.get_active_tools()
        kept = [name for name in self.state.tools_before if name not in PLAN_MODE_DISABLED_TOOLS]
        ctx.set_active_tools(_unique([*kept, *PLAN_MODE_TOOLS]))

    def restore_tools(self, ctx: ExtensionContext) -> None:
        if self.state.tools_before is not None:
            ctx.set_active_tools(self.state.tools_before)
        else:
            others = [name for name in ctx.get_active_tools() if name not in PLAN_MANAGED_TOOLS]
            ctx.set_active_tools(_unique([*NORMAL_MODE_TOOLS, *others]))
        self.state.tools_before = None

    def toggle(self, ctx: ExtensionContext) -> None:
        self.state.enabled = not self.state.enabled
        self.state.executing = False
        self.state.todos = []
        if self.state.enabled:
            self.enter_plan_tools(ctx)
            ctx.ui.notify("Plan mode enabled. Built-in write tools disabled.")
        else:
            self.restore_tools(ctx)
            ctx.ui.notify("Plan mode disabled. Full access restored.")
        self.update_status(ctx)
        self.persist(ctx)

    async def plan_command(self, args: str, ctx: CommandContext) -> None:
        self.toggle(ctx)

    async def todos_command(self, args: str, ctx: CommandContext) -> None:
        if not self.state.todos:
            ctx.ui.notify("No todos. Create a plan first with /plan", "info")
            return
        rows = [f"{i}. {'✓' if t.completed else '○'} {t.text}" for i, t in enumerate(self.state.todos, 1)]
        ctx.ui.notify("Plan Progress:\n" + "\n".join(rows), "info")

    async def toggle_shortcut(self, ctx: CommandContext) -> None:
        self.toggle(ctx)

    # --- the end of a run -----------------------------------------------------------------------------------------

    def _finish_execution(self, ctx: ExtensionContext, messages: list[Any]) -> None:
        last = _last_assistant(messages)
        if last is not None and all_steps_complete(assistant_text(last)):
            for item in self.state.todos:
                item.completed = True
        if not all(t.completed for t in self.state.todos):
            return
        struck = "\n".join(f"~~{t.text}~~" for t in self.state.todos)
        # With the next prompt rather than now: a run only to acknowledge the card would cost a model turn.
        ctx.send_message("plan-complete", f"**Plan Complete!** ✓\n\n{struck}", display=True,
                         deliver_as="nextTurn")
        self.state.executing = False
        self.state.todos = []
        self.update_status(ctx)
        self.persist(ctx)  # so a resumed session does not come back executing a finished plan

    async def _offer_plan(self, ctx: ExtensionContext, messages: list[Any]) -> None:
        last = _last_assistant(messages)
        if last is not None:
            found = extract_todo_items(assistant_text(last))
            if found:
                self.state.todos = found
        if not self.state.todos:
            return
        self.persist(ctx)
        listing = "\n".join(f"{i}. ☐ {t.text}" for i, t in enumerate(self.state.todos, 1))
        steps_card = f"**Plan Steps ({len(self.state.todos)}):**\n\n{listing}"
        choice = await ctx.ui.select("Plan mode - what next?", CHOICES)
        if choice is not None and choice.startswith("Execute"):
            first = self.state.todos[0]
            self.state.enabled, self.state.executing = False, True
            self.restore_tools(ctx)
            self.update_status(ctx)
            self.persist(ctx)
            remaining = "\n".join(f"{t.step}. {t.text}" for t in self.state.todos)
            execute = (f"Execute the plan.\n\nRemaining steps:\n{remaining}\n\nStart with: {first.text}\n"
                       "After completing a step, include a [DONE:n] tag in your response.")
            ctx.send_message("plan-todo-list", steps_card, display=True, deliver_as="followUp")
            ctx.send_message("plan-mode-execute", execute, display=True, deliver_as="followUp",
                             trigger_turn=True)
        elif choice == "Refine the plan":
            refinement = await ctx.ui.editor("Refine the plan:", "")
            if refinement and refinement.strip():
                ctx.send_message("plan-todo-list", steps_card, display=True, deliver_as="followUp")
                ctx.send_user_message(refinement.strip(), deliver_as="followUp")

    # --- hooks ----------------------------------------------------------------------------------------------------

    @hookimpl
    def pi_flags(self) -> list[Flag]:
        return [Flag(name="plan", description="Start in plan mode (read-only exploration)", type="boolean",
                     default=False)]

    @hookimpl
    def pi_commands(self) -> list[SlashCommand]:
        return [SlashCommand(name="plan", description="Toggle plan mode (read-only exploration)",
                             handler=self.plan_command),
                SlashCommand(name="todos", description="Show current plan todo list", handler=self.todos_command)]

    @hookimpl
    def pi_shortcuts(self) -> list[Shortcut]:
        return [Shortcut(key="ctrl+alt+p", description="Toggle plan mode", handler=self.toggle_shortcut)]

    @hookimpl
    def pi_before_tool_call(self, call: ToolCallInfo) -> BeforeToolCall | None:
        if not self.state.enabled or call.tool_name != "bash":
            return None
        command = str(_field(call.args, "command") or "")
        if is_safe_command(command):
            return None
        return BeforeToolCall(block=True, reason="Plan mode: command blocked (not allowlisted). Use /plan to "
                                                 f"disable plan mode first.\nCommand: {command}")

    @hookimpl
    def pi_context(self, messages: list[AgentMessage]) -> list[AgentMessage] | None:
        if self.state.enabled:
            return None
        return [m for m in messages if not _is_stale_plan_context(m)]

    @hookimpl
    def pi_before_agent_start(self, message_type: str) -> BeforeAgentStart | None:
        # Runs started by a custom message (a background notice, the plan's own execute message) skip this: the
        # last prompt's context is still in the conversation.
        if message_type != "user":
            return None
        if self.state.enabled:
            return BeforeAgentStart(message={"customType": "plan-mode-context", "content": PLAN_CONTEXT,
                                             "display": False})
        if self.state.executing and self.state.todos:
            remaining = "\n".join(f"{t.step}. {t.text}" for t in self.state.todos if not t.completed)
            return BeforeAgentStart(message={
                "customType": "plan-execution-context",
                "content": f"[EXECUTING PLAN - Full tool access enabled]\n\nRemaining steps:\n{remaining}\n\n"
                           "Execute each step in order.\nAfter completing a step, include a [DONE:n] tag in your "
                           "response.",
                "display": False})
        return None

    @hookimpl
    async def pi_agent_event(self, ctx: ExtensionContext, event: AgentEvent) -> None:
        if event.type == "turn_end":
            if self.state.executing and self.state.todos and _is_assistant(event.get("message")):
                mark_completed_steps(assistant_text(event.get("message")), self.state.todos)
                self.update_status(ctx)
                self.persist(ctx)
        elif event.type == "agent_end":
            messages = list(event.get("messages") or [])
            if self.state.executing and self.state.todos:
                self._finish_execution(ctx, messages)
            elif self.state.enabled and ctx.has_ui:
                await self._offer_plan(ctx, messages)

    def _restore(self, ctx: ExtensionContext) -> None:
        entries = ctx.session_manager.get_entries()
        saved = [e for e in entries if isinstance(e, CustomEntry) and e.custom_type == STATE_ENTRY]
        if not saved:
            return
        data = saved[-1].data
        if isinstance(data, dict):
            if isinstance(data.get("enabled"), bool):
                self.state.enabled = data["enabled"]
            if isinstance(data.get("todos"), list):
                self.state.todos = [t for t in map(TodoItem.from_json, data["todos"]) if t is not None]
            if isinstance(data.get("executing"), bool):
                self.state.executing = data["executing"]
            tools = data.get("toolsBeforePlanMode")
            if isinstance(tools, list):
                self.state.tools_before = [str(name) for name in tools]
        if self.state.executing and self.state.todos:
            # Only replies after the last execute message count: earlier [DONE:n] belong to an earlier plan.
            start = max((i for i, e in enumerate(entries) if isinstance(e, (CustomEntry, CustomMessageEntry))
                         and e.custom_type == "plan-mode-execute"), default=-1)
            replies = [e.message for e in entries[start + 1:]
                       if isinstance(e, MessageEntry) and _is_assistant(e.message)]
            mark_completed_steps("\n".join(assistant_text(m) for m in replies), self.state.todos)

    @hookimpl
    def pi_session_start(self, ctx: ExtensionContext) -> None:
        self.state.reset(enabled=ctx.get_flag("plan") is True)
        self._restore(ctx)
        if self.state.enabled:
            self.enter_plan_tools(ctx)
        self.update_status(ctx)

    @hookimpl
    def pi_session_shutdown(self, ctx: ExtensionContext) -> None:
        if self.state.tools_before is not None:
            # This session is in plan mode and pi keeps the active tools across sessions: the next session (with
            # its own instance) starts with the tools this one had before, as in Pi (a fresh tool set per session).
            ctx.set_active_tools(self.state.tools_before)
