"""reload_runtime: ``/reload-runtime`` reloads plugins, skills, prompts, themes and context files; the
``reload_runtime`` tool lets the model ask for the same once the run has settled."""

from __future__ import annotations

from typing import Any

from pi_core import SlashCommand, Tool, ToolContext, ToolResult, hookimpl
from pi_core.events import AgentEvent
from pi_core.extension import CommandContext, ExtensionContext
from pi_core.types import TextContent

DESCRIPTION = "Reload extensions, skills, prompts, themes, and context files"



async def reload_command(args: str, ctx: CommandContext) -> None:
    await ctx.reload()


class ReloadRuntime:
    """A class plugin: the pending request is this session's (one instance per session)."""

    def __init__(self) -> None:
        # A tool cannot reload (that replaces the plugins while the run that called it is still going), so it
        # only records the request and ends the run; the settled handler then runs the command.
        self.requested = False

    def request_reload(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        self.requested = True
        return ToolResult(content=[TextContent(text="Reload requested. Pi reloads after this response.")],
                          details={}, terminate=True)

    @hookimpl
    def pi_commands(self) -> list[SlashCommand]:
        return [SlashCommand("reload-runtime", DESCRIPTION, reload_command)]

    @hookimpl
    def pi_tools(self) -> list[Tool]:
        return [Tool(name="reload_runtime", label="Reload Runtime", description=DESCRIPTION,
                     parameters={"type": "object", "properties": {}}, execute=self.request_reload)]

    @hookimpl
    def pi_agent_event(self, ctx: ExtensionContext, event: AgentEvent) -> None:
        if event.type == "agent_settled" and self.requested:
            self.requested = False
            # Sent from agent_settled, it runs once every settled handler is done and the agent is idle; with
            # expand_prompt_templates it is dispatched as the command, never sent to the model.
            ctx.send_user_message("/reload-runtime", expand_prompt_templates=True)
