"""Editor completion through plugins' autocomplete providers (``ui.add_autocomplete_provider``).

The providers form a stack: each factory receives the one below and may delegate to it; pi's own
completions (commands and their arguments, ``@files``, paths) are the bottom of the stack.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pi_core.ui import Suggestion, Suggestions

if TYPE_CHECKING:
    from pi_plugins.interactive.host import AppHost

    from pi_core.signals import AbortSignal


class BuiltinProvider:
    """pi's completer as an ``AutocompleteProvider``."""

    def __init__(self, app: AppHost) -> None:
        self.app = app
        self.trigger_characters = ["/", "@"]

    async def get_suggestions(self, lines: list[str], line: int, col: int,
                              signal: AbortSignal | None = None) -> Suggestions | None:
        from prompt_toolkit.completion import CompleteEvent
        from prompt_toolkit.document import Document

        text = "\n".join(lines)
        position = sum(len(row) + 1 for row in lines[:line]) + col
        document = Document(text, min(position, len(text)))
        completer: Any = self.app.buffer.completer
        found = list(completer.builtin(document, CompleteEvent(completion_requested=True)))
        if not found:
            return None
        prefix = document.text_before_cursor[len(document.text_before_cursor) + found[0].start_position:]
        return Suggestions([Suggestion(c.text, c.display_text, c.display_meta_text or None) for c in found], prefix)


def builtin_provider(app: AppHost) -> BuiltinProvider:
    return BuiltinProvider(app)


def triggers(provider: Any) -> list[str]:
    return [str(t) for t in getattr(provider, "trigger_characters", None) or []]


def completing_while_typing(app: AppHost) -> bool:
    """Whether the menu opens by itself: a command name (or its arguments when it completes them), ``@``, triggers."""
    if app.text_dialog is not None:  # a plugin's text, not a prompt: no command or file menu pops up
        return False
    before = app.buffer.document.text_before_cursor
    if before.startswith("/") and "\n" not in before:
        name, space, _ = before[1:].partition(" ")
        command = app.commands.get(name) if space else None
        return not space or (command is not None and command.complete is not None)
    word = before.split()[-1] if before and not before[-1].isspace() else ""
    return word.startswith("@") or any(word.startswith(t) for t in triggers(app.chrome.autocomplete))
