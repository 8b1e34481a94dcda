"""permission_gate: ask the user before bash runs a command that looks destructive (rm -rf, sudo, chmod 777)."""

from __future__ import annotations

import re

from pi_core import BeforeToolCall, hookimpl
from pi_core.extension import ExtensionContext
from pi_core.tools import ToolCallInfo

DANGEROUS = (
    re.compile(r"\brm\s+(-rf?|--recursive)", re.IGNORECASE),
    re.compile(r"\bsudo\b", re.IGNORECASE),
    re.compile(r"\b(chmod|chown)\b.*777", re.IGNORECASE),
)


def is_dangerous(command: str) -> bool:
    return any(pattern.search(command) for pattern in DANGEROUS)


@hookimpl
async def pi_before_tool_call(ctx: ExtensionContext, call: ToolCallInfo) -> BeforeToolCall | None:
    if call.tool_name != "bash":
        return None
    command = str(call.args.get("command", ""))
    if not is_dangerous(command):
        return None
    if not ctx.has_ui:
        # Nobody can answer in print or JSON mode: refuse rather than guess.
        return BeforeToolCall(block=True, reason="Dangerous command blocked (no UI for confirmation)")
    choice = await ctx.ui.select(f"⚠️ Dangerous command:\n\n  {command}\n\nAllow?", ["Yes", "No"])
    if choice != "Yes":
        return BeforeToolCall(block=True, reason="Blocked by user")
    return None
