"""model_status: a notice and a footer status whenever the model changes (``/model``, Ctrl+P, RPC, plugins)."""

from __future__ import annotations

import logging

from pi_core import hookimpl
from pi_core.extension import ExtensionContext
from pi_core.types import Model

log = logging.getLogger(__name__)


def label(model: Model | None) -> str:
    return f"{model.provider}/{model.id}" if model is not None else "none"


@hookimpl
def pi_model_select(ctx: ExtensionContext, model: Model, previous_model: Model | None, source: str) -> None:
    # pi never reports a restored session's model here, so every call is a real change worth a notice.
    ctx.ui.notify(f"Model: {label(model)}", "info")
    ctx.ui.set_status("model", f"🤖 {model.id}")
    log.debug("[model_select] %s → %s (%s)", label(previous_model), label(model), source)
