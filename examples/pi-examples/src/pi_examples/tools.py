"""tools: ``/tools`` switches tools on and off in a settings list; the choice is saved per session branch."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pi_core import CustomEntry, SlashCommand, hookimpl
from pi_core.extension import CommandContext, ExtensionContext
from pi_core.tui import Container, SettingItem, SettingsList, SettingsListTheme, Text

ENTRY_TYPE = "tools-config"


@dataclass
class ToolsState:
    enabled: set[str] = field(default_factory=set)


class ToolsPanel:
    """"Tool Configuration" over a settings list with one enabled/disabled row per tool."""

    def __init__(self, ctx: ExtensionContext, state: ToolsState, tui: Any, theme: Any, keybindings: Any,
                 done: Callable[[Any], None]) -> None:
        self.ctx, self.state, self.tui = ctx, state, tui
        tools = ctx.get_all_tools()
        items = [SettingItem(t.name, t.name, "enabled" if t.name in state.enabled else "disabled",
                             ["enabled", "disabled"]) for t in tools]
        self.list = SettingsList(items, min(len(items) + 2, 15), SettingsListTheme.from_theme(theme), self._changed,
                                 lambda: done(None), keybindings=keybindings)
        self.container = Container(Text(theme.fg("accent", theme.bold("Tool Configuration")) + "\n", 0, 0),
                                   self.list)

    def _changed(self, name: str, value: str) -> None:
        if value == "enabled":
            self.state.enabled.add(name)
        else:
            self.state.enabled.discard(name)
        self.ctx.set_active_tools(sorted(self.state.enabled))
        self.ctx.append_entry(ENTRY_TYPE, {"enabledTools": sorted(self.state.enabled)})

    def render(self, width: int) -> list[str]:
        return self.container.render(width)

    def invalidate(self) -> None:
        self.container.invalidate()

    def handle_input(self, data: str) -> None:
        self.list.handle_input(data)
        request = getattr(self.tui, "request_render", None)
        if callable(request):
            request()


class ToolsConfig:
    """A class plugin: the enabled set is this session's (one instance per session)."""

    def __init__(self) -> None:
        self.state = ToolsState()

    def restore(self, ctx: ExtensionContext) -> None:
        """The last saved selection on this branch (tools that no longer exist dropped), else the active tools."""
        saved: list[str] | None = None
        for entry in ctx.session_manager.get_branch():
            if isinstance(entry, CustomEntry) and entry.custom_type == ENTRY_TYPE:
                data = entry.data
                if isinstance(data, dict) and isinstance(data.get("enabledTools"), list):
                    saved = [str(name) for name in data["enabledTools"]]
        if saved is None:
            self.state.enabled = set(ctx.get_active_tools())
            return
        known = {tool.name for tool in ctx.get_all_tools()}
        self.state.enabled = {name for name in saved if name in known}
        ctx.set_active_tools(sorted(self.state.enabled))

    @hookimpl
    def pi_session_start(self, ctx: ExtensionContext) -> None:
        self.restore(ctx)

    @hookimpl
    def pi_session_tree(self, ctx: ExtensionContext) -> None:
        self.restore(ctx)

    async def configure(self, args: str, ctx: CommandContext) -> None:
        if ctx.mode != "interactive":
            ctx.ui.notify("/tools requires TUI mode", "error")
            return
        await ctx.ui.custom(lambda tui, theme, keybindings, done:
                            ToolsPanel(ctx, self.state, tui, theme, keybindings, done))

    @hookimpl
    def pi_commands(self) -> list[SlashCommand]:
        return [SlashCommand(name="tools", description="Enable/disable tools", handler=self.configure)]
