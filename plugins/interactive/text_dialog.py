"""A plugin's ``ctx.ui.editor(title, prefill)``: multi-line text edited in pi's own editor under a title.

The editor takes the dialog's text while it is open (new lines, undo, the external editor and pastes work as in
the prompt); the user's unfinished prompt comes back when the dialog closes. Enter submits, Shift+Enter adds a
line, Escape or Ctrl+C cancels, as Pi's extension editor.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from pi_plugins.interactive import style
from pi_plugins.interactive.host import TextDialog

from pi_core.errors import PiError

if TYPE_CHECKING:
    from pi_plugins.interactive.host import AppHost

async def edit(app: AppHost, title: str, prefill: str = "") -> str | None:
    """The text the user submits, or None when they cancel."""
    if app.text_dialog is not None or app.panel is not None:
        raise PiError(f"Another question is open: {(app.text_dialog or app.panel).title}")  # type: ignore[union-attr]
    dialog = TextDialog(title, asyncio.get_running_loop().create_future(), app.buffer.document)
    app.text_dialog = dialog
    app.asked.set()
    app.buffer.cancel_completion()
    app.set_editor_text(prefill)
    try:
        return await dialog.answer
    finally:
        app.text_dialog = None
        app.buffer.set_document(dialog.draft, bypass_readonly=True)
        app.invalidate()


def finish(app: AppHost, value: str | None) -> None:
    dialog = app.text_dialog
    if dialog is not None and not dialog.answer.done():
        dialog.answer.set_result(value)


def title_fragments(app: AppHost) -> Any:
    dialog = app.text_dialog
    return [(f"bold {style.pt('accent')}", dialog.title)] if dialog is not None else []


def hint_fragments(app: AppHost) -> Any:
    def keys(action: str) -> str:
        return "/".join(key.id() for key in app.keybindings.keys(action)) or "(unbound)"

    hint = "  ".join(f"{keys(action)} {what}" for action, what in (
        ("tui.input.submit", "submit"), ("tui.input.newLine", "newline"), ("tui.select.cancel", "cancel"),
        ("app.editor.external", "external editor")))
    return [(style.pt("muted"), hint)]
