"""input_transform: ``?quick ...`` asks for a brief answer; ``ping`` and ``time`` are answered without the model."""

from __future__ import annotations

from datetime import datetime

from pi_core import InputResult, hookimpl
from pi_core.extension import ExtensionContext

QUICK = "?quick "


@hookimpl
def pi_input(ctx: ExtensionContext, text: str, source: str) -> InputResult | None:
    if source == "extension":  # messages other plugins send are left alone
        return None
    if text.startswith(QUICK):
        query = text[len(QUICK):].strip()
        if not query:
            ctx.ui.notify("Usage: ?quick <question>", "warning")
            return InputResult("handled")
        return InputResult("transform", text=f"Respond briefly in 1-2 sentences: {query}")
    if text.lower() == "ping":
        ctx.ui.notify("pong", "info")
        return InputResult("handled")
    if text.lower() == "time":
        now = datetime.now()
        ctx.ui.notify(f"{now.month}/{now.day}/{now.year}, {now.strftime('%I:%M:%S %p').lstrip('0')}", "info")
        return InputResult("handled")
    return None
