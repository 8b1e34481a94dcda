"""Hooks around tool calls and the user's own shell commands (``!cmd``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pi_core.hookspecs.markers import spec

if TYPE_CHECKING:
    from pathlib import Path

    from pi_core.extension import ExtensionContext
    from pi_core.hookspecs.results import AfterToolCall, BeforeToolCall, UserBash
    from pi_core.tools import ToolCallInfo, ToolResult

__all__ = ["pi_after_tool_call", "pi_before_tool_call", "pi_user_bash"]


@spec("chain", chain="call")
def pi_before_tool_call(ctx: ExtensionContext, call: ToolCallInfo) -> BeforeToolCall | None:
    """Decide on a tool call: after its arguments are validated, before ``execute``; once per call.

    Return ``BeforeToolCall(block=True, reason=...)`` to refuse the call (the model reads the reason; with
    ``terminate=True`` the run ends once every call of the batch is final), or ``BeforeToolCall(args=...)``
    to replace the arguments (not validated again). Later implementations see ``call.args`` as changed; the
    first block stops the chain. May be ``async def``: the call waits, e.g. for ``await ctx.ui.select(...)`` or
    until a server whose tools ``call.tool`` may reach has connected (``Tool.reaches_tools``).
    Raising ``ToolError`` blocks with the error's message. Any other exception blocks the call too, with a
    text naming the plugin, and is reported as an extension error (a safety check that fails fails closed).
    """


@spec("chain", chain="result")
def pi_after_tool_call(ctx: ExtensionContext, call: ToolCallInfo, result: ToolResult,
                       is_error: bool) -> AfterToolCall | None:
    """Patch a tool's result: after ``execute`` finishes, before ``tool_execution_end``; once per executed call.

    Return ``AfterToolCall`` with the fields to replace (content, details, is_error, terminate); fields left
    None keep their value. Each implementation sees the result and ``is_error`` as patched so far. Not
    called for blocked calls. A raising implementation is reported and the result stays as it was.
    """


@spec("first")
def pi_user_bash(ctx: ExtensionContext, command: str, exclude_from_context: bool, cwd: Path) -> UserBash | None:
    """Intercept the user's own shell command: ``!cmd`` / ``!!cmd`` in the interactive editor, RPC ``bash``.

    Called once per command, before it runs. Return ``UserBash(operations=...)`` to run it through other
    shell operations (a VM, SSH), or ``UserBash(result=...)`` when the plugin already ran it; None lets the
    next plugin decide, then pi runs it locally. ``exclude_from_context`` is True for ``!!``. A raising
    implementation is reported and the command is **not** run; the user sees the error.
    """
