"""``Input`` (also ``LineEditor``): a one-line text field with a cursor, horizontal scrolling and Pi's editing keys."""

from __future__ import annotations

from collections.abc import Callable

import wcwidth

from pi_core.tui.keys import KeyMatcher, as_keybindings, is_printable
from pi_core.tui.width import (
    CURSOR_MARKER,
    render_fake_cursor,
    slice_by_column,
    truncate_to_width,
    visible_width,
)

PASTE_START, PASTE_END = "\x1b[200~", "\x1b[201~"


def _graphemes(text: str) -> list[str]:
    return list(wcwidth.iter_graphemes(text))


class Input:
    """Edits ``value``. Enter calls ``on_submit(value)``, Escape (``tui.select.cancel``) calls ``on_escape()``.

    Keys: left/right (Ctrl+B/F), word moves (Alt/Ctrl+Left/Right, Alt+B/F), Home/End (Ctrl+A/E), Backspace,
    Delete (Ctrl+D), Ctrl+W / Alt+Backspace, Alt+D, Ctrl+U, Ctrl+K; a bracketed paste is inserted as one line.
    Set ``focused`` to emit ``CURSOR_MARKER`` before the cursor (the UI places the terminal cursor there).
    """

    def __init__(self, value: str = "", *, prompt: str = "> ", placeholder: str = "",
                 placeholder_style: Callable[[str], str] | None = None, keybindings: KeyMatcher | None = None) -> None:
        self.value = value
        self.cursor = len(value)
        self.prompt = prompt
        self.placeholder = placeholder
        self.placeholder_style = placeholder_style or (lambda s: f"\x1b[2m{s}\x1b[22m")
        self.keybindings = as_keybindings(keybindings)
        self.focused = False
        self.on_submit: Callable[[str], None] | None = None
        self.on_escape: Callable[[], None] | None = None
        self.on_change: Callable[[str], None] | None = None
        self._paste: str | None = None

    # --- value ---------------------------------------------------------------------------------------

    def get_value(self) -> str:
        return self.value

    def set_value(self, value: str) -> None:
        self.value, self.cursor = value, len(value)

    def invalidate(self) -> None:
        """Nothing cached."""

    def _set(self, value: str, cursor: int) -> None:
        changed = value != self.value
        self.value, self.cursor = value, max(0, min(cursor, len(value)))
        if changed and self.on_change is not None:
            self.on_change(value)

    def insert(self, text: str) -> None:
        clean = text.replace("\r\n", "").replace("\r", "").replace("\n", "").replace("\t", "    ")
        self._set(self.value[: self.cursor] + clean + self.value[self.cursor :], self.cursor + len(clean))

    # --- cursor arithmetic (graphemes, so an emoji or a combined character moves as one) -----------------

    def _prev(self, index: int) -> int:
        parts = _graphemes(self.value[:index])
        return index - len(parts[-1]) if parts else 0

    def _next(self, index: int) -> int:
        parts = _graphemes(self.value[index:])
        return index + len(parts[0]) if parts else len(self.value)

    def _word_left(self, index: int) -> int:
        while index > 0 and self.value[index - 1].isspace():
            index -= 1
        while index > 0 and not self.value[index - 1].isspace():
            index -= 1
        return index

    def _word_right(self, index: int) -> int:
        end = len(self.value)
        while index < end and self.value[index].isspace():
            index += 1
        while index < end and not self.value[index].isspace():
            index += 1
        return index

    # --- keys ----------------------------------------------------------------------------------------

    def handle_input(self, data: str) -> None:
        if self._paste is not None or data.startswith(PASTE_START):
            self._paste = (self._paste or "") + (data.removeprefix(PASTE_START))
            end = self._paste.find(PASTE_END)
            if end < 0:
                return
            pasted, rest = self._paste[:end], self._paste[end + len(PASTE_END):]
            self._paste = None
            self.insert(pasted)
            if rest:
                self.handle_input(rest)
            return
        kb, value, cur = self.keybindings, self.value, self.cursor
        if kb.matches(data, "tui.select.cancel"):
            if self.on_escape is not None:
                self.on_escape()
        elif kb.matches(data, "tui.input.submit"):
            if self.on_submit is not None:
                self.on_submit(value)
        elif kb.matches(data, "tui.editor.deleteCharBackward"):
            start = self._prev(cur)
            self._set(value[:start] + value[cur:], start)
        elif kb.matches(data, "tui.editor.deleteCharForward"):
            self._set(value[:cur] + value[self._next(cur):], cur)
        elif kb.matches(data, "tui.editor.deleteWordBackward"):
            start = self._word_left(cur)
            self._set(value[:start] + value[cur:], start)
        elif kb.matches(data, "tui.editor.deleteWordForward"):
            self._set(value[:cur] + value[self._word_right(cur):], cur)
        elif kb.matches(data, "tui.editor.deleteToLineStart"):
            self._set(value[cur:], 0)
        elif kb.matches(data, "tui.editor.deleteToLineEnd"):
            self._set(value[:cur], cur)
        elif kb.matches(data, "tui.editor.cursorWordLeft"):
            self.cursor = self._word_left(cur)
        elif kb.matches(data, "tui.editor.cursorWordRight"):
            self.cursor = self._word_right(cur)
        elif kb.matches(data, "tui.editor.cursorLeft"):
            self.cursor = self._prev(cur)
        elif kb.matches(data, "tui.editor.cursorRight"):
            self.cursor = self._next(cur)
        elif kb.matches(data, "tui.editor.cursorLineStart"):
            self.cursor = 0
        elif kb.matches(data, "tui.editor.cursorLineEnd"):
            self.cursor = len(value)
        elif is_printable(data):
            self.insert(data)

    # --- drawing -------------------------------------------------------------------------------------

    def render(self, width: int) -> list[str]:
        width = max(1, width)
        room = width - visible_width(self.prompt)
        if room <= 0:
            return [truncate_to_width(self.prompt, width, "")]
        marker = CURSOR_MARKER if self.focused else ""
        if not self.value and self.placeholder:
            shown = truncate_to_width(self.placeholder, room, "")
            parts = _graphemes(shown) or [" "]
            text = marker + render_fake_cursor(self.placeholder_style(parts[0])) + self.placeholder_style(
                "".join(parts[1:]))
            return [self.prompt + text + " " * max(0, room - visible_width(text))]
        before_width = visible_width(self.value[: self.cursor])
        total = visible_width(self.value)
        start = 0
        if total >= room:
            span = room - 1 if self.cursor == len(self.value) else room
            half = span // 2
            if before_width < half:
                start = 0
            elif before_width > total - half:
                start = max(0, total - span)
            else:
                start = max(0, before_width - half)
        before = slice_by_column(self.value[: self.cursor], start, before_width)
        rest = _graphemes(self.value[self.cursor :])
        at = rest[0] if rest else " "
        after_room = max(0, room - visible_width(before) - visible_width(at))
        after = slice_by_column("".join(rest[1:]), 0, after_room)
        text = before + marker + render_fake_cursor(at) + after
        return [truncate_to_width(self.prompt + text + " " * max(0, room - visible_width(text)), width, "")]


LineEditor = Input
