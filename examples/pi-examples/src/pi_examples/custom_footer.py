"""custom_footer: ``/footer`` swaps pi's footer for one line of tokens, cost, model and git branch (and back)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pi_core import MessageEntry, SlashCommand, hookimpl
from pi_core.extension import CommandContext
from pi_core.tui import truncate_to_width, visible_width
from pi_core.types import AssistantMessage


def compact(n: int) -> str:
    return str(n) if n < 1000 else f"{n / 1000:.1f}k"


class Footer:
    def __init__(self, tui: Any, theme: Any, data: Any, ctx: CommandContext) -> None:
        self.theme, self.data, self.ctx = theme, data, ctx
        self.dispose: Callable[[], None] = data.on_branch_change(lambda branch: tui.request_render())

    def render(self, width: int) -> list[str]:
        tokens_in = tokens_out = 0
        cost = 0.0
        for entry in self.ctx.session_manager.get_branch():
            if isinstance(entry, MessageEntry) and isinstance(entry.message, AssistantMessage):
                usage = entry.message.usage
                tokens_in += usage.input
                tokens_out += usage.output
                cost += usage.cost.total
        branch = self.data.git_branch()
        left = self.theme.fg("dim", f"↑{compact(tokens_in)} ↓{compact(tokens_out)} ${cost:.3f}")
        model = self.ctx.model.id if self.ctx.model is not None else "no-model"
        right = self.theme.fg("dim", model + (f" ({branch})" if branch else ""))
        pad = " " * max(1, width - visible_width(left) - visible_width(right))
        return [truncate_to_width(left + pad + right, width)]

    def invalidate(self) -> None:
        """Nothing cached."""


class CustomFooter:
    """A class plugin: whether the footer is on is this session's (one instance per session)."""

    def __init__(self) -> None:
        self.enabled = False

    def footer(self, args: str, ctx: CommandContext) -> None:
        self.enabled = not self.enabled
        if self.enabled:
            ctx.ui.set_footer(lambda tui, theme, data: Footer(tui, theme, data, ctx))
            ctx.ui.notify("Custom footer enabled", "info")
        else:
            ctx.ui.set_footer(None)
            ctx.ui.notify("Default footer restored", "info")

    @hookimpl
    def pi_commands(self) -> list[SlashCommand]:
        return [SlashCommand("footer", "Toggle custom footer", self.footer)]
