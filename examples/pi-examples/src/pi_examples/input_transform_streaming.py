"""input_transform_streaming: adds ``git diff --stat`` to prompts about changes, but never slows down steering."""

from __future__ import annotations

import re

from pi_core import InputResult, hookimpl
from pi_core.extension import ExtensionContext

TRIGGER = re.compile(r"\b(changes?|diff|modified)\b", re.IGNORECASE)


@hookimpl
async def pi_input(ctx: ExtensionContext, text: str, streaming_behavior: str | None) -> InputResult | None:
    if streaming_behavior == "steer":
        return None  # a correction mid-run must reach the model without waiting for git
    if not TRIGGER.search(text):
        return None
    diff = await ctx.exec("git", ["diff", "--stat"])
    stat = diff.stdout.strip()
    if diff.code != 0 or not stat:
        return None
    return InputResult("transform", text=f"{text}\n\nCurrent uncommitted changes:\n```\n{stat}\n```")
