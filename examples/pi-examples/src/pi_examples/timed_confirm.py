"""timed_confirm: dialogs that close by themselves, after a timeout (``/timed``, ``/timed-select``) or a signal."""

from __future__ import annotations

import asyncio

from pi_core import SlashCommand, hookimpl
from pi_core.extension import CommandContext
from pi_core.signals import AbortSignal

CONFIRM_TITLE = "Timed Confirmation"
CONFIRM_TEXT = "This dialog will auto-cancel in 5 seconds. Confirm?"


async def timed(args: str, ctx: CommandContext) -> None:
    if await ctx.ui.confirm(CONFIRM_TITLE, CONFIRM_TEXT, timeout=5):
        ctx.ui.notify("Confirmed by user!", "info")
    else:
        ctx.ui.notify("Cancelled or timed out", "info")


async def timed_select(args: str, ctx: CommandContext) -> None:
    choice = await ctx.ui.select("Pick an option", ["Option A", "Option B", "Option C"], timeout=10)
    ctx.ui.notify(f"Selected: {choice}" if choice else "Selection cancelled or timed out", "info")


async def timed_signal(args: str, ctx: CommandContext) -> None:
    signal = AbortSignal()
    timer = asyncio.get_running_loop().call_later(5, signal.abort)
    ctx.ui.notify("Dialog will auto-cancel in 5 seconds...", "info")
    try:
        confirmed = await ctx.ui.confirm(CONFIRM_TITLE, CONFIRM_TEXT, signal=signal)
    finally:
        timer.cancel()
    if confirmed:
        ctx.ui.notify("Confirmed by user!", "info")
    elif signal.aborted:
        ctx.ui.notify("Dialog timed out (auto-cancelled)", "warning")
    else:
        ctx.ui.notify("Cancelled by user", "info")


@hookimpl
def pi_commands() -> list[SlashCommand]:
    return [
        SlashCommand(name="timed", description="Show a timed confirmation dialog (auto-cancels in 5s with countdown)",
                     handler=timed),
        SlashCommand(name="timed-select",
                     description="Show a timed select dialog (auto-cancels in 10s with countdown)",
                     handler=timed_select),
        SlashCommand(name="timed-signal", description="Show a timed confirm using AbortSignal (manual approach)",
                     handler=timed_signal),
    ]
