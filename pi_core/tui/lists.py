"""``SelectList`` (pick one item, filterable, scrolling) and ``SettingsList`` (cycle each setting's values)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pi_core.tui.fuzzy import fuzzy_filter
from pi_core.tui.input import Input
from pi_core.tui.keys import KeyMatcher, as_keybindings
from pi_core.tui.width import truncate_to_width, visible_width, wrap_ansi

if TYPE_CHECKING:
    from pi_core.ui import Component, Theme

Style = Callable[[str], str]


def _plain(text: str) -> str:
    return text


def _visible_range(selected: int, count: int, max_visible: int) -> tuple[int, int]:
    """The window of ``max_visible`` rows that keeps ``selected`` in the middle where it can."""
    start = max(0, min(selected - max_visible // 2, count - max_visible))
    return start, min(start + max_visible, count)


def _page_move(kb: Any, data: str, selected: int, count: int, page: int) -> int | None:
    if kb.matches(data, "tui.select.pageUp"):
        return max(0, selected - max(1, page))
    if kb.matches(data, "tui.select.pageDown"):
        return min(max(0, count - 1), selected + max(1, page))
    return None


@dataclass
class SelectItem:
    value: str
    label: str | None = None
    description: str | None = None


@dataclass
class SelectListTheme:
    selected_prefix: Style = _plain
    selected_text: Style = _plain
    description: Style = _plain
    scroll_info: Style = _plain
    no_match: Style = _plain

    @classmethod
    def from_theme(cls, theme: Theme) -> SelectListTheme:
        """Pi's select-list colours from a ``ctx.ui.theme``."""
        return cls(selected_prefix=lambda s: theme.fg("accent", s), selected_text=lambda s: theme.fg("accent", s),
                   description=lambda s: theme.fg("muted", s), scroll_info=lambda s: theme.fg("muted", s),
                   no_match=lambda s: theme.fg("muted", s))


class SelectList:
    """Up/Down (wrapping) and PageUp/PageDown move, Enter calls ``on_select(item)``, Escape or Ctrl+C
    ``on_cancel()``. ``set_filter(text)`` keeps the items whose value starts with ``text`` (``fuzzy=True``:
    fuzzy match on the label, best first). At most ``max_visible`` rows show, with a ``(3/12)`` line when
    the list scrolls. An item's description shows in a second column when the width allows."""

    PRIMARY_COLUMN = 32

    def __init__(self, items: list[SelectItem], max_visible: int = 5, theme: SelectListTheme | None = None, *,
                 keybindings: KeyMatcher | None = None, fuzzy: bool = False) -> None:
        self.items = list(items)
        self.filtered = list(items)
        self.max_visible = max(1, max_visible)
        self.theme = theme or SelectListTheme()
        self.keybindings = as_keybindings(keybindings)
        self.fuzzy = fuzzy
        self.selected_index = 0
        self.on_select: Callable[[SelectItem], Any] | None = None
        self.on_cancel: Callable[[], Any] | None = None
        self.on_selection_change: Callable[[SelectItem], Any] | None = None

    def set_filter(self, text: str) -> None:
        if self.fuzzy:
            self.filtered = fuzzy_filter(text, self.items, lambda item: item.label or item.value)
        else:
            self.filtered = [item for item in self.items if item.value.lower().startswith(text.lower())]
        self.selected_index = 0

    def set_selected_index(self, index: int) -> None:
        self.selected_index = max(0, min(index, len(self.filtered) - 1))

    def selected_item(self) -> SelectItem | None:
        return self.filtered[self.selected_index] if self.filtered else None

    def invalidate(self) -> None:
        """Nothing cached."""

    def _changed(self) -> None:
        item = self.selected_item()
        if item is not None and self.on_selection_change is not None:
            self.on_selection_change(item)

    def handle_input(self, data: str) -> None:
        kb, count = self.keybindings, len(self.filtered)
        page = _page_move(kb, data, self.selected_index, count, self.max_visible)
        if kb.matches(data, "tui.select.up"):
            if count:
                self.selected_index = count - 1 if self.selected_index == 0 else self.selected_index - 1
                self._changed()
        elif kb.matches(data, "tui.select.down"):
            if count:
                self.selected_index = 0 if self.selected_index >= count - 1 else self.selected_index + 1
                self._changed()
        elif page is not None:
            if count and page != self.selected_index:
                self.selected_index = page
                self._changed()
        elif kb.matches(data, "tui.select.confirm"):
            item = self.selected_item()
            if item is not None and self.on_select is not None:
                self.on_select(item)
        elif kb.matches(data, "tui.select.cancel") and self.on_cancel is not None:
            self.on_cancel()

    def render(self, width: int) -> list[str]:
        width = max(1, width)
        if not self.filtered:
            return [truncate_to_width(self.theme.no_match("  No matching commands"), width)]
        column = min(self.PRIMARY_COLUMN, max(visible_width(i.label or i.value) + 2 for i in self.filtered))
        start, end = _visible_range(self.selected_index, len(self.filtered), self.max_visible)
        lines = [self._row(self.filtered[i], i == self.selected_index, width, column) for i in range(start, end)]
        if start > 0 or end < len(self.filtered):
            info = truncate_to_width(f"  ({self.selected_index + 1}/{len(self.filtered)})", max(1, width - 2), "")
            lines.append(self.theme.scroll_info(info))
        return [truncate_to_width(line, width) for line in lines]

    def _row(self, item: SelectItem, selected: bool, width: int, column: int) -> str:
        prefix = "→ " if selected else "  "
        label = (item.label or item.value).replace("\n", " ")
        description = " ".join((item.description or "").split())
        if description and width > 40:
            col = max(1, min(column, width - 6))
            shown = truncate_to_width(label, max(1, col - 2), "")
            spacing = " " * max(1, col - visible_width(shown))
            room = width - 2 - visible_width(shown) - len(spacing) - 2
            if room > 10:
                desc = truncate_to_width(description, room, "")
                if selected:
                    return self.theme.selected_text(prefix + shown + spacing + desc)
                return prefix + shown + self.theme.description(spacing + desc)
        shown = truncate_to_width(label, max(1, width - 4), "")
        return self.theme.selected_text(prefix + shown) if selected else prefix + shown


@dataclass
class SettingItem:
    """One setting: Enter or Space moves ``current_value`` to the next of ``values``, or opens ``submenu``
    (``submenu(current_value, done) -> Component``; ``done(value or None)`` closes it)."""

    id: str
    label: str
    current_value: str
    values: list[str] = field(default_factory=list)
    description: str | None = None
    submenu: Callable[[str, Callable[[str | None], None]], Component] | None = None


@dataclass
class SettingsListTheme:
    label: Callable[[str, bool], str] = lambda text, selected: text
    value: Callable[[str, bool], str] = lambda text, selected: text
    description: Style = _plain
    cursor: str = "→ "
    hint: Style = _plain

    @classmethod
    def from_theme(cls, theme: Theme) -> SettingsListTheme:
        """Pi's settings-list colours from a ``ctx.ui.theme``."""
        return cls(label=lambda t, s: theme.fg("accent", t) if s else t,
                   value=lambda t, s: theme.fg("accent", t) if s else theme.fg("muted", t),
                   description=lambda t: theme.fg("dim", t), cursor=theme.fg("accent", "→ "),
                   hint=lambda t: theme.fg("dim", t))


class SettingsList:
    """Settings with their values: Up/Down move, Enter/Space changes the selected one and calls
    ``on_change(id, value)``, Escape calls ``on_cancel()``. ``enable_search=True`` adds a filter line
    (typing filters by label, fuzzy)."""

    def __init__(self, items: list[SettingItem], max_visible: int, theme: SettingsListTheme | None = None,
                 on_change: Callable[[str, str], object] | None = None, on_cancel: Callable[[], object] | None = None,
                 *, enable_search: bool = False, keybindings: KeyMatcher | None = None) -> None:
        self.items = items
        self.filtered = list(items)
        self.max_visible = max(1, max_visible)
        self.theme = theme or SettingsListTheme()
        self.on_change = on_change
        self.on_cancel = on_cancel
        self.keybindings = as_keybindings(keybindings)
        self.search = Input(keybindings=self.keybindings) if enable_search else None
        self.selected_index = 0
        self.submenu: Any = None
        self._submenu_index: int | None = None

    def _shown(self) -> list[SettingItem]:
        return self.filtered if self.search is not None else self.items

    def update_value(self, item_id: str, value: str) -> None:
        for item in self.items:
            if item.id == item_id:
                item.current_value = value

    def select_item(self, item_id: str) -> None:
        for index, item in enumerate(self._shown()):
            if item.id == item_id:
                self.selected_index = index

    def invalidate(self) -> None:
        invalidate = getattr(self.submenu, "invalidate", None)
        if callable(invalidate):
            invalidate()

    def handle_input(self, data: str) -> None:
        if self.submenu is not None:
            handler = getattr(self.submenu, "handle_input", None)
            if callable(handler):
                handler(data)
            return
        kb, shown = self.keybindings, self._shown()
        page = _page_move(kb, data, self.selected_index, len(shown), self.max_visible)
        searching = self.search is not None and bool(self.search.value)
        if kb.matches(data, "tui.select.up"):
            if shown:
                self.selected_index = len(shown) - 1 if self.selected_index == 0 else self.selected_index - 1
        elif kb.matches(data, "tui.select.down"):
            if shown:
                self.selected_index = 0 if self.selected_index >= len(shown) - 1 else self.selected_index + 1
        elif page is not None:
            if shown:
                self.selected_index = page
        elif kb.matches(data, "tui.select.confirm") or (data == " " and not searching):
            self._activate()
        elif kb.matches(data, "tui.select.cancel"):
            if self.on_cancel is not None:
                self.on_cancel()
        elif self.search is not None:
            before = self.search.value
            self.search.handle_input(data)
            if self.search.value != before:
                query = self.search.value
                self.filtered = fuzzy_filter(query, self.items, lambda item: item.label) if query else list(self.items)
                self.selected_index = 0

    def _activate(self) -> None:
        shown = self._shown()
        if not shown:
            return
        item = shown[self.selected_index]
        if item.submenu is not None:
            self._submenu_index = self.selected_index

            def close(value: str | None) -> None:
                if value is not None:
                    item.current_value = value
                    if self.on_change is not None:
                        self.on_change(item.id, value)
                self.submenu = None
                if self._submenu_index is not None:
                    self.selected_index, self._submenu_index = self._submenu_index, None

            self.submenu = item.submenu(item.current_value, close)
        elif item.values:
            index = item.values.index(item.current_value) if item.current_value in item.values else -1
            item.current_value = item.values[(index + 1) % len(item.values)]
            if self.on_change is not None:
                self.on_change(item.id, item.current_value)

    def render(self, width: int) -> list[str]:
        width = max(1, width)
        if self.submenu is not None:
            return [truncate_to_width(line, width) for line in self.submenu.render(width)]
        lines: list[str] = []
        if self.search is not None:
            lines.extend([*self.search.render(width), ""])
        if not self.items:
            lines.append(self.theme.hint("  No settings available"))
            if self.search is not None:
                self._hint(lines)
            return [truncate_to_width(line, width) for line in lines]
        shown = self._shown()
        if not shown:
            lines.append(self.theme.hint("  No matching settings"))
            self._hint(lines)
            return [truncate_to_width(line, width) for line in lines]
        label_width = min(36, max(visible_width(item.label) for item in self.items))
        start, end = _visible_range(self.selected_index, len(shown), self.max_visible)
        for index in range(start, end):
            item = shown[index]
            selected = index == self.selected_index
            prefix = self.theme.cursor if selected else "  "
            label = truncate_to_width(item.label, label_width, "", pad=True)
            room = max(1, width - visible_width(prefix) - label_width - 4)
            value = self.theme.value(truncate_to_width(item.current_value, room, ""), selected)
            lines.append(prefix + self.theme.label(label, selected) + "  " + value)
        if start > 0 or end < len(shown):
            lines.append(self.theme.hint(f"  ({self.selected_index + 1}/{len(shown)})"))
        current = shown[self.selected_index] if self.selected_index < len(shown) else None
        if current is not None and current.description:
            lines.append("")
            lines.extend(self.theme.description(f"  {line}") for line in wrap_ansi(current.description, width - 4))
        self._hint(lines)
        return [truncate_to_width(line, width) for line in lines]

    def _hint(self, lines: list[str]) -> None:
        text = ("  Type to search · Enter/Space to change · Esc to cancel" if self.search is not None
                else "  Enter/Space to change · Esc to cancel")
        lines.extend(["", self.theme.hint(text)])
