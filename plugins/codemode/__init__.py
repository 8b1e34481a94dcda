"""codemode: the model writes a JavaScript script that calls pi's other tools, and only the script's output
reaches it (docs/codemode.md). Registered inactive: ``--tools +codemode`` or ``"defaultTools": ["+codemode"]``.

This module stays small (pi loads it on every start); the sandbox, the declarations and the result texts load
on the first call, or when a run with codemode active starts."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from pi_plugins.codemode.texts import GLOBALS, INTRO

from pi_core import Tool, ToolContext, hookimpl

if TYPE_CHECKING:
    from pi_core.extension import ExtensionContext
    from pi_core.tools import ToolResult

NAME = "codemode"
MODES = ("on", "only")
GUIDELINE = ("Use codemode to batch independent tool calls (Promise.allSettled), chain them, or filter large "
             "output, instead of many separate calls.")

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {"code": {"type": "string", "description": "Raw JavaScript source."}},
    "required": ["code"],
}

async def _execute(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    from pi_plugins.codemode.execute import execute

    return await execute(args, ctx)


TOOL = Tool(
    name=NAME,
    label=NAME,
    description=f"{INTRO}\n\n{GLOBALS}",  # the loadout adds the tools scripts can call
    parameters=PARAMETERS,
    execute=_execute,
    prompt_snippet="Run JavaScript that calls other tools",
    prompt_guidelines=[GUIDELINE],
    active_by_default=False,
    reaches_tools=True,
)


def _settings(ctx: ExtensionContext) -> tuple[str, int]:
    raw = ctx.get_settings().get("codemode")
    raw = raw if isinstance(raw, dict) else {}
    mode = raw.get("mode") if raw.get("mode") in MODES else "on"
    budget = raw.get("inlineBudget")
    if not isinstance(budget, (int, float)) or isinstance(budget, bool) or budget < 0:
        budget = 3000
    return str(mode), int(budget)


@hookimpl
def pi_tools() -> list[Tool]:
    return [TOOL]


@hookimpl
def pi_before_agent_start(ctx: ExtensionContext) -> None:
    """While codemode is active, present the tools as ``codemode.mode`` says (docs/codemode.md#how-tools-are-presented)."""
    active = ctx.get_active_tools()
    if NAME not in active:
        return
    from pi_plugins.codemode import loadout

    mode, budget = _settings(ctx)
    tools = {t.name: t for t in ctx.get_all_tools()}
    hidden = loadout.HIDDEN.setdefault(ctx.session, set())
    callable_tools = loadout.callable_tools(list(tools.values()), active, hidden)
    changed: list[Tool] = []
    if mode == "on":
        listed = [t for t in callable_tools if t.exposure != "direct"]
        for name in active:
            tool = tools.get(name)
            if tool is not None and name not in loadout.NOT_CALLABLE:
                noted = loadout.with_note(tool)  # type: ignore[arg-type]
                if noted.description != tool.description:
                    changed.append(noted)
    else:
        listed = callable_tools
        hide = [n for n in active if n not in loadout.NOT_CALLABLE and tools[n].exposure == "direct"]
        if hide:
            hidden.update(hide)
            ctx.set_active_tools([n for n in active if n not in hide])
    originals = [loadout.original_of(t) for t in listed]
    text = loadout.description(originals, {t.name for t in originals if t.exposure == "deferred"}, budget)
    if tools[NAME].description != text:
        changed.append(replace(TOOL, description=text))
    if changed:
        ctx.add_tools(changed)
