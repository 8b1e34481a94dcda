"""Panels: what the app shows in place of the editor (pickers, /tree, /settings, /resume ...).

A panel draws itself as prompt_toolkit fragments and handles keys. Each key press reaches it as a
``PanelKey`` carrying the keybinding actions bound to that key (``tui.select.up``, ``app.tree.editLabel``)
and the character typed, so panels follow keybindings.json without knowing key names.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol


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
