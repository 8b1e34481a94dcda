"""todo: a ``todo`` tool (list/add/toggle/clear) whose state lives in its results' details, plus ``/todos``.

The list is rebuilt from the tool results on the current branch whenever a session starts or the tree is
navigated, so going back in ``/tree`` gives the list as it was there.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pi_core import MessageEntry, SlashCommand, Tool, ToolContext, ToolResult, hookimpl
from pi_core.extension import CommandContext, ExtensionContext
from pi_core.render import Renderer
from pi_core.tui import matches_key, truncate_to_width
from pi_core.types import TextContent, ToolResultMessage
from pi_core.ui import PlainTheme, Theme

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "action": {"type": "string", "enum": ["list", "add", "toggle", "clear"]},
        "text": {"type": "string", "description": "Todo text (for add)"},
        "id": {"type": "number", "description": "Todo ID (for toggle)"},
    },
    "required": ["action"],
}


@dataclass
class Todo:
    id: int
    text: str
    done: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "text": self.text, "done": self.done}


@dataclass
class TodoState:
    todos: list[Todo] = field(default_factory=list)
    next_id: int = 1


def _details(state: TodoState, action: str, error: str | None = None) -> dict[str, Any]:
    details: dict[str, Any] = {"action": action, "todos": [t.to_json() for t in state.todos],
                               "nextId": state.next_id}
    if error is not None:
        details["error"] = error
    return details


def _result(state: TodoState, text: str, action: str, error: str | None = None) -> ToolResult:
    return ToolResult(content=[TextContent(text=text)], details=_details(state, action, error))


def execute(state: TodoState, args: dict[str, Any]) -> ToolResult:
    """One ``todo`` call on ``state``; the result's details carry the whole list afterwards."""
    action = args.get("action")
    if action == "list":
        text = "\n".join(f"[{'x' if t.done else ' '}] #{t.id}: {t.text}" for t in state.todos)
        return _result(state, text or "No todos", "list")
    if action == "add":
        if not args.get("text"):
            return _result(state, "Error: text required for add", "add", "text required")
        todo = Todo(state.next_id, str(args["text"]))
        state.next_id += 1
        state.todos.append(todo)
        return _result(state, f"Added todo #{todo.id}: {todo.text}", "add")
    if action == "toggle":
        if args.get("id") is None:
            return _result(state, "Error: id required for toggle", "toggle", "id required")
        wanted = args["id"]
        found = next((t for t in state.todos if t.id == wanted), None)
        shown = int(wanted) if isinstance(wanted, float) and wanted.is_integer() else wanted
        if found is None:
            return _result(state, f"Todo #{shown} not found", "toggle", f"#{shown} not found")
        found.done = not found.done
        return _result(state, f"Todo #{found.id} {'completed' if found.done else 'uncompleted'}", "toggle")
    if action == "clear":
        count = len(state.todos)
        state.todos, state.next_id = [], 1
        return _result(state, f"Cleared {count} todos", "clear")
    return _result(state, f"Unknown action: {action}", "list", f"unknown action: {action}")


# --- state from the branch ---------------------------------------------------------------------------------

def rebuild(state: TodoState, ctx: ExtensionContext) -> None:
    """The list as the last ``todo`` result on the current branch left it."""
    state.todos, state.next_id = [], 1
    for entry in ctx.session_manager.get_branch():
        message = entry.message if isinstance(entry, MessageEntry) else None
        if not isinstance(message, ToolResultMessage) or message.tool_name != "todo":
            continue
        details = message.details
        if isinstance(details, dict) and isinstance(details.get("todos"), list):
            state.todos = [Todo(int(t["id"]), str(t["text"]), bool(t.get("done"))) for t in details["todos"]]
            state.next_id = int(details.get("nextId", len(state.todos) + 1))


# --- drawing ---------------------------------------------------------------------------------------------

def render_call(args: dict[str, Any], th: Any) -> str:
    text = th.fg("toolTitle", th.bold("todo ")) + th.fg("muted", str(args.get("action", "")))
    if args.get("text"):
        text += " " + th.fg("dim", f'"{args["text"]}"')
    if args.get("id") is not None:
        text += " " + th.fg("accent", f"#{args['id']}")
    return text


def _first_text(result: Any) -> str:
    content = getattr(result, "content", None) or []
    first = content[0] if content else None
    return str(getattr(first, "text", "") or "")


def render_result(result: Any, is_error: bool, expanded: bool, th: Any) -> str:
    details = getattr(result, "details", None)
    if not isinstance(details, dict):
        return _first_text(result)
    if details.get("error"):
        return th.fg("error", f"Error: {details['error']}")
    todos = details.get("todos") or []
    action = details.get("action")
    if action == "list":
        if not todos:
            return th.fg("dim", "No todos")
        lines = [th.fg("muted", f"{len(todos)} todo(s):")]
        for todo in todos if expanded else todos[:5]:
            check = th.fg("success", "✓") if todo["done"] else th.fg("dim", "○")
            body = th.fg("dim", todo["text"]) if todo["done"] else th.fg("muted", todo["text"])
            lines.append(f"{check} {th.fg('accent', '#' + str(todo['id']))} {body}")
        if not expanded and len(todos) > 5:
            lines.append(th.fg("dim", f"... {len(todos) - 5} more"))
        return "\n".join(lines)
    if action == "add" and todos:
        added = todos[-1]
        return th.fg("success", "✓ Added ") + th.fg("accent", f"#{added['id']}") + " " + th.fg("muted", added["text"])
    if action == "toggle":
        return th.fg("success", "✓ ") + th.fg("muted", _first_text(result))
    if action == "clear":
        return th.fg("success", "✓ ") + th.fg("muted", "Cleared all todos")
    return th.fg("error", _first_text(result))


# --- /todos ----------------------------------------------------------------------------------------------

class TodoListComponent:
    """The todos of the branch, with a count of the completed ones; Escape or Ctrl+C closes it."""

    def __init__(self, todos: list[Todo], theme: Theme, on_close: Callable[[], None]) -> None:
        self.todos = todos
        self.theme = theme
        self.on_close = on_close

    def handle_input(self, data: str) -> None:
        if matches_key(data, "escape") or matches_key(data, "ctrl+c"):
            self.on_close()

    def invalidate(self) -> None:
        """Drawn afresh each time."""

    def render(self, width: int) -> list[str]:
        th = self.theme
        header = th.fg("borderMuted", "───") + th.fg("accent", " Todos ") + th.fg("borderMuted", "─" * max(0, width - 10))
        lines = ["", header, ""]
        if not self.todos:
            lines.append("  " + th.fg("dim", "No todos yet. Ask the agent to add some!"))
        else:
            done = sum(1 for t in self.todos if t.done)
            lines += ["  " + th.fg("muted", f"{done}/{len(self.todos)} completed"), ""]
            for todo in self.todos:
                check = th.fg("success", "✓") if todo.done else th.fg("dim", "○")
                body = th.fg("dim", todo.text) if todo.done else th.fg("text", todo.text)
                lines.append(f"  {check} {th.fg('accent', f'#{todo.id}')} {body}")
        lines += ["", "  " + th.fg("dim", "Press Escape to close"), ""]
        return [truncate_to_width(line, width) for line in lines]


# --- the plugin ------------------------------------------------------------------------------------------

class TodoTool:
    """A class plugin: the list and the theme its rows are drawn with are this session's (one instance per
    session)."""

    def __init__(self) -> None:
        self.state = TodoState()
        self.theme: Any = PlainTheme()

    def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return execute(self.state, args)

    @hookimpl
    def pi_tools(self) -> list[Tool]:
        return [Tool(name="todo", label="Todo",
                     description="Manage a todo list. Actions: list, add (text), toggle (id), clear",
                     parameters=PARAMETERS, execute=self.execute)]

    @hookimpl
    def pi_session_start(self, ctx: ExtensionContext) -> None:
        self.theme = ctx.ui.theme
        rebuild(self.state, ctx)

    @hookimpl
    def pi_session_tree(self, ctx: ExtensionContext) -> None:
        rebuild(self.state, ctx)

    def render_call(self, args: dict[str, Any]) -> str:
        return render_call(args, self.theme)

    def render_result(self, result: Any, is_error: bool, expanded: bool) -> str:
        return render_result(result, is_error, expanded, self.theme)

    @hookimpl
    def pi_renderers(self) -> list[Renderer]:
        return [Renderer(tool_name="todo", call=self.render_call, result=self.render_result)]

    async def show_todos(self, args: str, ctx: CommandContext) -> None:
        if ctx.mode != "interactive":
            ctx.ui.notify("/todos requires interactive mode", "error")
            return
        await ctx.ui.custom(lambda tui, theme, keybindings, done:
                            TodoListComponent(self.state.todos, theme, lambda: done(None)))

    @hookimpl
    def pi_commands(self) -> list[SlashCommand]:
        return [SlashCommand(name="todos", description="Show all todos on the current branch", handler=self.show_todos)]
