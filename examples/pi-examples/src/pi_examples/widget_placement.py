"""widget_placement: one widget above the editor and one below it, set when the session starts."""

from __future__ import annotations

from pi_core import hookimpl
from pi_core.extension import ExtensionContext


@hookimpl
def pi_session_start(ctx: ExtensionContext, reason: str) -> None:
    if not ctx.has_ui:
        return
    ctx.ui.set_widget("widget-above", ["Above editor widget"])
    ctx.ui.set_widget("widget-below", ["Below editor widget"], "belowEditor")
