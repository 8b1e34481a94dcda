"""modal_editor: a vim-like editor. Escape leaves insert mode; in normal mode hjkl move, 0/$ jump, x deletes,
i/a insert again; the bottom border says NORMAL or INSERT. App keys (ctrl+c, ctrl+d ...) work in both modes."""

from __future__ import annotations

from pi_core import hookimpl
from pi_core.extension import ExtensionContext
from pi_core.tui import CustomEditor, matches_key, truncate_to_width, visible_width

NORMAL_KEYS: dict[str, str | None] = {
    "h": "\x1b[D", "j": "\x1b[B", "k": "\x1b[A", "l": "\x1b[C",  # arrows
    "0": "\x01", "$": "\x05",  # line start / end
    "x": "\x1b[3~",  # delete the character under the cursor
    "i": None, "a": None,  # back to insert mode (a: after the cursor)
}


class ModalEditor(CustomEditor):
    mode = "insert"

    def handle_input(self, data: str) -> None:
        if matches_key(data, "escape"):
            if self.mode == "insert":
                self.mode = "normal"
            else:
                super().handle_input(data)  # pi's Escape: interrupt the agent and so on
            return
        if self.mode == "insert":
            super().handle_input(data)
            return
        if data in NORMAL_KEYS:
            if data == "i":
                self.mode = "insert"
            elif data == "a":
                self.mode = "insert"
                super().handle_input("\x1b[C")
            elif NORMAL_KEYS[data]:
                super().handle_input(str(NORMAL_KEYS[data]))
            return
        if len(data) == 1 and ord(data) >= 32:
            return  # other printable keys do nothing in normal mode
        super().handle_input(data)

    def render(self, width: int) -> list[str]:
        lines = super().render(width)
        if not lines:
            return lines
        label = " NORMAL " if self.mode == "normal" else " INSERT "
        if visible_width(lines[-1]) >= len(label):
            lines[-1] = truncate_to_width(lines[-1], width - len(label), "") + label
        return lines


@hookimpl
def pi_session_start(ctx: ExtensionContext, reason: str) -> None:
    ctx.ui.set_editor_component(lambda tui, theme, keybindings: ModalEditor(tui, theme, keybindings))
