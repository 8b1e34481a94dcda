"""protected_paths: refuse write and edit calls on paths containing .env, .git/ or node_modules/."""

from __future__ import annotations

from pi_core import BeforeToolCall, hookimpl
from pi_core.extension import ExtensionContext
from pi_core.tools import ToolCallInfo

PROTECTED = (".env", ".git/", "node_modules/")


@hookimpl
def pi_before_tool_call(ctx: ExtensionContext, call: ToolCallInfo) -> BeforeToolCall | None:
    if call.tool_name not in ("write", "edit"):
        return None
    path = str(call.args.get("path", ""))
    # A substring test, as in Pi: "x.env.example" counts as protected too.
    if not any(part in path for part in PROTECTED):
        return None
    if ctx.has_ui:
        ctx.ui.notify(f"Blocked write to protected path: {path}", "warning")
    return BeforeToolCall(block=True, reason=f'Path "{path}" is protected')
