"""working_message_test: a brown "Working... (custom)" message and dot, set once, kept on every run."""

from __future__ import annotations

from pi_core import hookimpl
from pi_core.extension import ExtensionContext
from pi_core.ui import WorkingIndicator

CUSTOM_MESSAGE = "\x1b[38;2;155;86;63mWorking... (custom)\x1b[39m"
CUSTOM_INDICATOR = WorkingIndicator(["\x1b[38;2;155;86;63m●\x1b[39m"])


@hookimpl
def pi_session_start(ctx: ExtensionContext, reason: str) -> None:
    ctx.ui.set_working_message(CUSTOM_MESSAGE)
    ctx.ui.set_working_indicator(CUSTOM_INDICATOR)
