"""Panels: what the app shows in place of the editor (pickers, /tree, /settings, /resume ...).

A panel draws itself as prompt_toolkit fragments and handles keys. Each key press reaches it as a
``PanelKey`` carrying the keybinding actions bound to that key (``tui.select.up``, ``app.tree.editLabel``)
and the character typed, so panels follow keybindings.json without knowing key names.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from pi_plugins.interactive import style


@dataclass(frozen=True)
class PanelKey:
    name: str  # prompt_toolkit's names joined by spaces: "up", "c-left", "escape up", "L"
    actions: frozenset[str]
    text: str | None = None  # the printable character typed, if any

    def is_(self, *actions: str) -> bool:
        return any(action in self.actions for action in actions)

    @property
    def backspace(self) -> bool:
        return self.name in ("backspace", "c-h")


@dataclass(frozen=True)
class Done:
    """A panel's answer: the app closes the panel and hands ``value`` to whoever opened it."""

    value: Any = None


class Panel(Protocol):
    @property
    def title(self) -> str: ...

    def lines(self, width: int) -> list[tuple[str, str]]: ...
    def handle(self, key: PanelKey) -> Done | None: ...


def key_name(event: Any) -> str:
    """The prompt_toolkit key sequence of a key event, as a PanelKey name."""
    from prompt_toolkit.keys import Keys

    parts = []
    for press in event.key_sequence:
        parts.append(press.key.value if isinstance(press.key, Keys) else str(press.key))
    return " ".join(parts)


def text_of(event: Any) -> str | None:
    data = event.data
    if len(event.key_sequence) == 1 and isinstance(data, str) and len(data) == 1 and data.isprintable():
        return data
    return None


def query_line(query: str) -> list[tuple[str, str]]:
    """A filtering panel's search line: ``> ``, what was typed and a block cursor."""
    return [("", "> "), ("", query), ("reverse", " "), ("", "\n")]


def visible_window(index: int, count: int, height: int) -> range:
    """The positions of a ``count``-row list that ``height`` lines show, the cursor at ``index`` kept mid-way."""
    start = max(0, min(index - height // 2, count - height))
    return range(start, min(count, start + height))


def notices(message: str, error: str = "") -> list[tuple[str, str]]:
    """A panel's last outcome above its key help: what succeeded, what failed (each line only when set)."""
    shown = [("success", message), ("error", error)]
    return [(style.pt(role), f"  {text}\n") for role, text in shown if text]


class SearchCursor:
    """A filtering panel's search text and cursor, and the keys all such panels answer alike."""

    query: str = ""
    index: int = 0

    def clear_or_close(self) -> Done | None:
        """Escape: clear the search first; with none, close the panel with no answer."""
        if self.query:
            self.query, self.index = "", 0
            return None
        return Done(None)

    def move_or_type(self, key: PanelKey, count: int) -> None:
        """Up and down move the cursor round ``count`` rows; backspace and typed text edit the search."""
        if key.is_("tui.select.up") and count:
            self.index = (self.index - 1) % count
        elif key.is_("tui.select.down") and count:
            self.index = (self.index + 1) % count
        elif key.backspace:
            self.query, self.index = self.query[:-1], 0
        elif key.text:
            self.query, self.index = self.query + key.text, 0
