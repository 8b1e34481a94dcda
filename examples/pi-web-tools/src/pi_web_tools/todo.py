"""todo: a task list the model keeps for the project, stored in ``<cwd>/.pi/todo.json``."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from pi_core import Tool, ToolContext, ToolError, ToolResult, hookimpl

STORE = Path(".pi") / "todo.json"

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "action": {"type": "string", "enum": ["add", "list", "done"],
                   "description": "add a task, list all tasks, or mark a task done"},
        "text": {"type": "string", "description": "The task to add (action add)"},
        "id": {"type": "integer", "description": "The task number to mark done (action done)"},
    },
    "required": ["action"],
}

DESCRIPTION = (
    "Keep a task list for this project across turns and sessions: add a task, list tasks, or mark one "
    "done by its number. The list lives in .pi/todo.json in the working directory."
)


def _store(ctx: ToolContext) -> Path:
    return Path(ctx.cwd) / STORE


def load(ctx: ToolContext) -> list[dict[str, Any]]:
    path = _store(ctx)
    if not path.is_file():
        return []
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise ToolError(f"{STORE} is unreadable ({err}); fix or delete it to start a new list") from err
    if not isinstance(data, list):
        raise ToolError(f"{STORE} does not hold a list; fix or delete it to start a new list")
    return data


def save(ctx: ToolContext, items: list[dict[str, Any]]) -> None:
    path = _store(ctx)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(items, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)  # never leave a half-written list behind


def render(items: list[dict[str, Any]]) -> str:
    if not items:
        return "No tasks yet."
    return "\n".join(f"{item['id']}. [{'x' if item['done'] else ' '}] {item['text']}" for item in items)


def execute(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    items = load(ctx)
    action = args["action"]
    if action == "add":
        text = (args.get("text") or "").strip()
        if not text:
            raise ToolError("action add needs a non-empty text")
        item = {"id": max((i["id"] for i in items), default=0) + 1, "text": text, "done": False}
        items.append(item)
        save(ctx, items)
        return ToolResult.text(f"Added task {item['id']}: {text}\n\n{render(items)}", {"items": items})
    if action == "done":
        if "id" not in args:
            raise ToolError("action done needs the id of the task")
        match = next((i for i in items if i["id"] == args["id"]), None)
        if match is None:
            known = ", ".join(str(i["id"]) for i in items) or "none"
            raise ToolError(f"No task {args['id']}; existing task ids: {known}")
        match["done"] = True
        save(ctx, items)
        return ToolResult.text(f"Marked task {match['id']} done\n\n{render(items)}", {"items": items})
    return ToolResult.text(render(items), {"items": items})


# Sequential: two calls in one turn must not both read the old list and lose an update.
TOOL = Tool(name="todo", label="todo", description=DESCRIPTION, parameters=PARAMETERS, execute=execute,
            execution_mode="sequential", prompt_snippet="Track the tasks of a multi-step job (add/list/done)")


@hookimpl
def pi_tools() -> list[Tool]:
    return [TOOL]
