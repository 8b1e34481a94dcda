"""preset: named presets (model, thinking level, tools, extra instructions) from presets.json, chosen with
``--preset NAME``, ``/preset [NAME]`` (a selector without a name) or Ctrl+Shift+U (cycles).

Presets come from ``<agentDir>/presets.json`` and ``<cwd>/.pi/presets.json`` (the project's win by name). The
active preset's name is saved in the session at each turn, so a resumed session keeps its instructions.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pi_core import (
    BeforeAgentStart,
    CustomEntry,
    Flag,
    Shortcut,
    SlashCommand,
    hookimpl,
)
from pi_core.config_paths import agent_dir
from pi_core.events import AgentEvent
from pi_core.extension import CommandContext, ExtensionContext
from pi_core.tui import (
    Container,
    DynamicBorder,
    SelectItem,
    SelectList,
    SelectListTheme,
    Text,
)
from pi_core.types import Model

NONE = "(none)"
DEFAULT_TOOLS = ["read", "bash", "edit", "write"]


@dataclass
class Original:
    model: Model | None
    thinking_level: str
    tools: list[str]


@dataclass
class PresetState:
    presets: dict[str, dict[str, Any]] = field(default_factory=dict)
    active: str | None = None
    original: Original | None = None


def _paths(cwd: Path) -> list[Path]:
    return [agent_dir() / "presets.json", cwd / ".pi" / "presets.json"]


def load_presets(cwd: Path) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """The merged presets (project over global by name) and a problem line per unreadable file."""
    merged: dict[str, dict[str, Any]] = {}
    problems: list[str] = []
    for path in _paths(cwd):
        if not path.is_file():
            continue
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as err:
            problems.append(f"Failed to load presets from {path}: {err}")
            continue
        if not isinstance(data, dict):
            problems.append(f"Failed to load presets from {path}: expected an object of preset names")
            continue
        merged.update({str(k): v for k, v in data.items() if isinstance(v, dict)})
    return merged, problems


def describe(preset: dict[str, Any]) -> str:
    parts: list[str] = []
    if preset.get("provider") and preset.get("model"):
        parts.append(f"{preset['provider']}/{preset['model']}")
    if preset.get("thinkingLevel"):
        parts.append(f"thinking:{preset['thinkingLevel']}")
    if preset.get("tools"):
        parts.append(f"tools:{','.join(preset['tools'])}")
    if preset.get("instructions"):
        text = str(preset["instructions"])
        parts.append(f'"{text[:27]}..."' if len(text) > 30 else f'"{text}"')
    return " | ".join(parts)


def _none_defined(ctx: ExtensionContext) -> str:
    global_path, project_path = _paths(ctx.cwd)
    return f"No presets defined. Add presets to {global_path} or {project_path}"


class PresetSelector:
    """"Select Preset": the presets with what each sets, and "(none)" to clear."""

    def __init__(self, state: PresetState, theme: Any, keybindings: Any, done: Any) -> None:
        items = [SelectItem(name, f"{name} (active)" if name == state.active else name, describe(preset))
                 for name, preset in state.presets.items()]
        items.append(SelectItem(NONE, NONE, "Clear active preset, restore defaults"))
        self.list = SelectList(items, min(len(items), 10), SelectListTheme(
            selected_prefix=lambda s: theme.fg("accent", s), selected_text=lambda s: theme.fg("accent", s),
            description=lambda s: theme.fg("muted", s), scroll_info=lambda s: theme.fg("dim", s),
            no_match=lambda s: theme.fg("warning", s)), keybindings=keybindings)
        self.list.on_select = lambda item: done(item.value)
        self.list.on_cancel = lambda: done(None)
        border = DynamicBorder(lambda s: theme.fg("accent", s))
        self.container = Container(border, Text(theme.fg("accent", theme.bold("Select Preset"))), self.list,
                                   Text(theme.fg("dim", "↑↓ navigate • enter select • esc cancel")), border)

    def render(self, width: int) -> list[str]:
        return self.container.render(width)

    def invalidate(self) -> None:
        self.container.invalidate()

    def handle_input(self, data: str) -> None:
        self.list.handle_input(data)


class Preset:
    """A class plugin: the presets read at session start, the active one and the settings it replaced are this
    session's (one instance per session)."""

    def __init__(self) -> None:
        self.state = PresetState()

    async def apply(self, name: str, preset: dict[str, Any], ctx: ExtensionContext) -> None:
        state = self.state
        if state.active is None:
            state.original = Original(ctx.model, ctx.get_thinking_level(), ctx.get_active_tools())
        provider, model_id = preset.get("provider"), preset.get("model")
        if provider and model_id:
            model = ctx.model_registry.find(str(provider), str(model_id))
            if model is None:
                ctx.ui.notify(f'Preset "{name}": Model {provider}/{model_id} not found', "warning")
            elif not await ctx.set_model(model):
                ctx.ui.notify(f'Preset "{name}": No API key for {provider}/{model_id}', "warning")
        if preset.get("thinkingLevel"):
            ctx.set_thinking_level(str(preset["thinkingLevel"]))
        tools = [str(t) for t in preset.get("tools") or []]
        if tools:
            known = {t.name for t in ctx.get_all_tools()}
            unknown = [t for t in tools if t not in known]
            if unknown:
                ctx.ui.notify(f'Preset "{name}": Unknown tools: {", ".join(unknown)}', "warning")
            if any(t in known for t in tools):
                ctx.set_active_tools([t for t in tools if t in known])
        state.active = name

    async def clear(self, ctx: ExtensionContext) -> None:
        self.state.active = None
        original = self.state.original
        if original is not None:
            if original.model is not None:
                await ctx.set_model(original.model)
            ctx.set_thinking_level(original.thinking_level)
            ctx.set_active_tools(original.tools)
        else:
            ctx.set_active_tools(DEFAULT_TOOLS)
        ctx.ui.notify("Preset cleared, defaults restored", "info")
        self.update_status(ctx)

    def update_status(self, ctx: ExtensionContext) -> None:
        if self.state.active:
            ctx.ui.set_status("preset", ctx.ui.theme.fg("accent", f"preset:{self.state.active}"))
        else:
            ctx.ui.set_status("preset", None)

    async def activate(self, name: str, ctx: ExtensionContext) -> None:
        await self.apply(name, self.state.presets[name], ctx)
        ctx.ui.notify(f'Preset "{name}" activated', "info")
        self.update_status(ctx)

    def _available(self) -> str:
        return ", ".join(self.state.presets) or "(none defined)"

    async def show_selector(self, ctx: CommandContext) -> None:
        if not self.state.presets:
            ctx.ui.notify(_none_defined(ctx), "warning")
            return
        chosen = await ctx.ui.custom(lambda tui, theme, keybindings, done:
                                     PresetSelector(self.state, theme, keybindings, done))
        if not chosen:
            return
        if chosen == NONE:
            await self.clear(ctx)
        elif chosen in self.state.presets:
            await self.activate(str(chosen), ctx)

    async def preset_command(self, args: str, ctx: CommandContext) -> None:
        name = args.strip()
        if not name:
            await self.show_selector(ctx)
        elif name not in self.state.presets:
            ctx.ui.notify(f'Unknown preset "{name}". Available: {self._available()}', "error")
        else:
            await self.activate(name, ctx)

    async def cycle(self, ctx: CommandContext) -> None:
        names = sorted(self.state.presets)
        if not names:
            ctx.ui.notify(_none_defined(ctx), "warning")
            return
        order = [NONE, *names]
        active = self.state.active or NONE  # no preset active is "(none)": the next one is the first preset
        current = order.index(active) if active in order else -1
        following = order[(current + 1) % len(order)] if current >= 0 else order[0]
        if following == NONE:
            await self.clear(ctx)
        else:
            await self.activate(following, ctx)

    @hookimpl
    def pi_flags(self) -> list[Flag]:
        return [Flag(name="preset", description="Preset configuration to use", type="string")]

    @hookimpl
    def pi_commands(self) -> list[SlashCommand]:
        return [SlashCommand(name="preset", description="Switch preset configuration", handler=self.preset_command)]

    @hookimpl
    def pi_shortcuts(self) -> list[Shortcut]:
        return [Shortcut(key="ctrl+shift+u", description="Cycle presets", handler=self.cycle)]

    @hookimpl
    async def pi_session_start(self, ctx: ExtensionContext) -> None:
        state = self.state
        state.presets, problems = load_presets(ctx.cwd)
        state.active, state.original = None, None
        for problem in problems:
            ctx.ui.notify(problem, "error")
        flag = ctx.get_flag("preset")
        if isinstance(flag, str) and flag:
            if flag in state.presets:
                await self.activate(flag, ctx)
            else:
                ctx.ui.notify(f'Unknown preset "{flag}". Available: {self._available()}', "warning")
        else:
            saved = [e for e in ctx.session_manager.get_entries()
                     if isinstance(e, CustomEntry) and e.custom_type == "preset-state"]
            data = saved[-1].data if saved else None
            name = data.get("name") if isinstance(data, dict) else None
            if isinstance(name, str) and name in state.presets:
                state.active = name  # instructions only: model and tools were restored with the session
        self.update_status(ctx)

    @hookimpl
    def pi_before_agent_start(self, system_prompt: str) -> BeforeAgentStart | None:
        instructions = self.state.presets.get(self.state.active or "", {}).get("instructions")
        if not instructions:
            return None
        return BeforeAgentStart(system_prompt=f"{system_prompt}\n\n{instructions}")

    @hookimpl
    def pi_agent_event(self, ctx: ExtensionContext, event: AgentEvent) -> None:
        if getattr(event, "type", None) == "turn_start" and self.state.active:
            ctx.append_entry("preset-state", {"name": self.state.active})
