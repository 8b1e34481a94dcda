"""``CustomEditor``: the base of a plugin's replacement editor (``ctx.ui.set_editor_component``).

The interactive UI attaches an ``EditorHost`` to the editor it creates. By default every key goes to the
host, which edits as pi's own editor does (app keys such as Enter, Escape, Ctrl+C included), and ``render``
draws pi's editor; a subclass overrides ``handle_input`` / ``render`` and calls ``super()`` for the rest,
feeding the keys it translates (``super().handle_input("\\x1b[D")`` moves left).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from pi_core.tui.keys import KeyMatcher
    from pi_core.ui import Theme, TuiHandle


class EditorHost(Protocol):
    """What the interactive UI gives a custom editor: pi's own editing and drawing."""

    def default_input(self, data: str) -> None: ...
    def default_render(self, width: int, border: Callable[[str], str] | None = None) -> list[str]: ...
    def get_text(self) -> str: ...
    def set_text(self, text: str) -> None: ...


class CustomEditor:
    """Keys (``handle_input(data)``, Pi's terminal key data) and lines (``render(width)``) of the editor."""

    def __init__(self, tui: TuiHandle, theme: Theme, keybindings: KeyMatcher,
                 options: dict[str, Any] | None = None) -> None:  # open: the plugin's own editor options, kept as given
        self.tui = tui
        self.theme = theme
        self.keybindings = keybindings
        self.options = dict(options or {})
        self.host: EditorHost | None = None  # set by the UI before the first key or render

    def handle_input(self, data: str) -> None:
        if self.host is not None:
            self.host.default_input(data)

    def render(self, width: int) -> list[str]:
        return self.host.default_render(width, self.border_color) if self.host is not None else []

    def border_color(self, text: str) -> str:
        """Colour a piece of the border as pi's editor does (the theme's ``borderMuted``)."""
        fg = getattr(self.theme, "fg", None)
        return fg("borderMuted", text) if fg is not None else text

    def get_text(self) -> str:
        return self.host.get_text() if self.host is not None else ""

    def set_text(self, text: str) -> None:
        if self.host is not None:
            self.host.set_text(text)

    @property
    def text(self) -> str:
        return self.get_text()

    def invalidate(self) -> None:
        """Nothing cached here; subclasses that cache drop it."""
