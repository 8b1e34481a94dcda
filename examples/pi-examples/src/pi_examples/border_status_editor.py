"""border_status_editor: the editor's borders carry the status: a spinner on the top border while the agent
works, model, thinking level, context use, cwd and git branch on the bottom one; pi's footer and working row go."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from typing import Any

from pi_core import hookimpl
from pi_core.events import AgentEvent
from pi_core.extension import ExtensionContext
from pi_core.tui import CustomEditor, truncate_to_width, visible_width

FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"]


def fit_border(left: str, right: str, width: int, border: Callable[[str], str]) -> str:
    """``─left───…───right─`` exactly ``width`` wide; the right part gives way first, then the left."""
    if width <= 0:
        return ""
    if width == 1:
        return border("─")
    while 2 + visible_width(left) + visible_width(right) + 3 > width and visible_width(right) > 0:
        right = truncate_to_width(right, visible_width(right) - 1, "")
    while 2 + visible_width(left) + visible_width(right) + 3 > width and visible_width(left) > 0:
        left = truncate_to_width(left, visible_width(left) - 1, "")
    gap = max(0, width - 2 - visible_width(left) - visible_width(right))
    return border("─") + left + border("─" * gap) + right + border("─")


def short_cwd(cwd: str) -> str:
    home = os.environ.get("HOME")
    return "~" + cwd[len(home):] if home and cwd.startswith(home) else cwd


def context_text(ctx: ExtensionContext) -> str:
    usage = ctx.get_context_usage()
    window = usage.context_window if usage is not None else (ctx.model.context_window if ctx.model else 0)
    if not window or usage is None or usage.percent is None:
        return "ctx ?"
    return f"ctx {round(usage.percent)}%/{window / 1000:.0f}k"


class EmptyFooter:
    def render(self, width: int) -> list[str]:
        return []

    def invalidate(self) -> None:
        """Nothing cached."""


class BorderStatusEditor(CustomEditor):
    ctx: ExtensionContext
    state: BorderStatus

    def render(self, width: int) -> list[str]:
        lines = super().render(width)
        if len(lines) < 2:
            return lines
        theme, ctx = self.ctx.ui.theme, self.ctx
        model = f"{ctx.model.provider}/{ctx.model.id}" if ctx.model is not None else "no model"
        state = self.state
        top_left = theme.fg("accent", f" {FRAMES[state.frame]} ") if state.working else ""
        bottom_left = theme.fg("muted", f" {model} · {ctx.get_thinking_level()} ")
        branch = f" ({state.branch})" if state.branch else ""
        bottom_right = theme.fg("muted", f" {context_text(ctx)} · {short_cwd(str(ctx.cwd))}{branch} ")
        lines[0] = fit_border(top_left, "", width, self.border_color)
        lines[-1] = fit_border(bottom_left, bottom_right, width, self.border_color)
        return lines


class BorderStatus:
    """A class plugin: the spinner, the branch and the TUI to redraw are this session's (one instance per
    session)."""

    def __init__(self) -> None:
        self.working = False
        self.frame = 0
        self.branch: str | None = None
        self.spinner: asyncio.Task[None] | None = None
        self.tui: Any = None

    def make_editor(self, ctx: ExtensionContext) -> Callable[..., BorderStatusEditor]:
        def factory(tui: Any, theme: Any, keybindings: Any) -> BorderStatusEditor:
            editor = BorderStatusEditor(tui, theme, keybindings, {"padding_x": 0})
            editor.ctx, editor.state = ctx, self
            self.tui = tui
            return editor

        return factory

    async def refresh_branch(self, ctx: ExtensionContext) -> None:
        try:
            result = await ctx.exec("git", ["branch", "--show-current"], cwd=ctx.cwd)
        except OSError:
            return
        self.branch = result.stdout.strip() or None
        if self.tui is not None:
            self.tui.request_render()

    async def spin(self) -> None:
        while True:
            await asyncio.sleep(0.08)
            self.frame = (self.frame + 1) % len(FRAMES)
            if self.tui is not None:
                self.tui.request_render()

    def stop_spinner(self) -> None:
        if self.spinner is not None:
            self.spinner.cancel()
            self.spinner = None

    @hookimpl
    def pi_session_start(self, ctx: ExtensionContext, reason: str) -> None:
        ctx.ui.set_working_visible(False)
        ctx.ui.set_footer(lambda tui, theme, data: EmptyFooter())
        ctx.ui.set_editor_component(self.make_editor(ctx))
        asyncio.get_running_loop().create_task(self.refresh_branch(ctx))

    @hookimpl
    def pi_agent_event(self, ctx: ExtensionContext, event: AgentEvent) -> None:
        if event.type == "agent_start":
            self.working = True
            self.stop_spinner()
            self.spinner = asyncio.get_running_loop().create_task(self.spin())
        elif event.type == "agent_settled":
            self.working = False
            self.stop_spinner()
        else:
            return
        if self.tui is not None:
            self.tui.request_render()

    @hookimpl
    def pi_session_shutdown(self, ctx: ExtensionContext, reason: str) -> None:
        self.stop_spinner()
        self.tui = None
