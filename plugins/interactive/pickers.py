"""Pickers: a filterable list (models, sessions, tree entries, tools with checkboxes).

``Picker`` is plain state driven by keys; the app draws it inline in place of the editor. For use
before the app exists (``pi --resume``, the project-trust prompt), ``pick_session`` and ``StartupUI``
run one picker as its own full-screen application: the only full-screen takeovers.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pi_plugins.interactive import style
from pi_plugins.interactive.panel import Done, PanelKey, visible_window

from pi_core.tui.fuzzy import fuzzy_filter
from pi_core.ui import UI

if TYPE_CHECKING:
    from pi_core.signals import AbortSignal

VISIBLE_ROWS = 10


@dataclass
class PickItem:
    label: str
    value: Any
    hint: str = ""  # shown dimmed after the label
    search: str = ""  # extra text the filter matches (defaults to the label)


@dataclass
class Picker:
    title: str
    items: list[PickItem]
    multi: bool = False  # checkboxes: space toggles, enter confirms the checked set
    checked: set[int] = field(default_factory=set)  # indexes into ``items``
    query: str = ""
    index: int = 0  # cursor within ``visible()``
    free_text: bool = False  # no items: the typed text is the answer (a plugin's ``ui.input``)
    placeholder: str = ""
    deadline: float | None = None  # time.monotonic() when a timed dialog closes: a countdown in the title

    def heading(self) -> str:
        """The title, with the seconds left when the dialog is timed (Pi counts "(5s)", "(4s)" ... to 1)."""
        if self.deadline is None:
            return self.title
        return f"{self.title} ({max(0, math.ceil(self.deadline - time.monotonic()))}s)"

    def visible(self) -> list[int]:
        order = fuzzy_filter(self.query, range(len(self.items)),
                             key=lambda i: f"{self.items[i].label} {self.items[i].hint} {self.items[i].search}")
        return order

    def move(self, delta: int) -> None:
        count = len(self.visible())
        self.index = (self.index + delta) % count if count else 0

    def type(self, text: str) -> None:
        self.query += text
        self.index = 0

    def backspace(self) -> None:
        self.query = self.query[:-1]
        self.index = 0

    def toggle(self) -> None:
        visible = self.visible()
        if visible:
            self.checked ^= {visible[self.index]}

    def current(self) -> PickItem | None:
        visible = self.visible()
        return self.items[visible[self.index]] if visible else None

    def handle(self, key: PanelKey) -> Done | None:
        if key.is_("tui.select.confirm"):
            return Done(self.result())
        if key.is_("tui.select.cancel"):
            return Done(None)
        if key.is_("tui.select.up"):
            self.move(-1)
        elif key.is_("tui.select.down"):
            self.move(1)
        elif key.is_("tui.select.pageUp"):
            self.move(-min(VISIBLE_ROWS, max(1, self.index)))
        elif key.is_("tui.select.pageDown"):
            self.move(min(VISIBLE_ROWS, max(1, len(self.visible()) - 1 - self.index)))
        elif key.backspace:
            self.backspace()
        elif key.text == " " and self.multi:
            self.toggle()
        elif key.text:
            self.type(key.text)
        return None

    def result(self) -> Any:
        if self.free_text:
            return self.query
        if self.multi:
            return [item.value for i, item in enumerate(self.items) if i in self.checked]
        item = self.current()
        return item.value if item else None

    def lines(self, width: int) -> list[tuple[str, str]]:
        """(style, text) fragments: title, query line, a window of rows around the cursor, key help."""
        muted = style.pt("muted")
        frags: list[tuple[str, str]] = [("bold", self.heading() + "\n"), ("", "> "), ("", self.query),
                                        ("reverse", " ")]
        if self.free_text:
            if not self.query and self.placeholder:
                frags.append((muted, " " + self.placeholder))
            return [*frags, ("", "\n"), (muted, "enter confirm · esc cancel")]
        frags.append(("", "\n"))
        visible = self.visible()
        for row in visible_window(self.index, len(visible), VISIBLE_ROWS):
            item_index = visible[row]
            item = self.items[item_index]
            mark = ("[x] " if item_index in self.checked else "[ ] ") if self.multi else ""
            pointer = "→ " if row == self.index else "  "
            label = (pointer + mark + item.label)[: max(10, width - 2)]
            frags.append((f"bold {style.pt('accent')}" if row == self.index else "", label))
            if item.hint and len(label) + len(item.hint) + 3 < width:
                frags.append((muted, "  " + item.hint))
            frags.append(("", "\n"))
        if not visible:
            frags.append((muted, "  no matches\n"))
        elif len(visible) > VISIBLE_ROWS:
            frags.append((muted, f"  ({self.index + 1}/{len(visible)})\n"))
        keys = "↑↓ move · space toggle · enter confirm · esc cancel" if self.multi else \
            "↑↓ move · type to filter · enter select · esc cancel"
        frags.append((muted, keys))
        return frags


def age(ms: int) -> str:
    seconds = max(0, time.time() - ms / 1000)
    for size, unit in ((86400, "d"), (3600, "h"), (60, "m")):
        if seconds >= size:
            return f"{int(seconds // size)}{unit} ago"
    return "just now"


def session_items(infos: list[Any]) -> list[PickItem]:
    """Sessions newest first: name or first message, with age and message count."""
    items = []
    for info in sorted(infos, key=lambda i: i.modified, reverse=True):
        label = (info.name or info.first_message or "(empty)").replace("\n", " ")[:80]
        items.append(PickItem(label, info.path, hint=f"{age(info.modified)} · {info.message_count} msgs",
                              search=info.all_messages_text[:2000]))
    return items


def run_picker_app(picker: Any, *, input: Any = None, output: Any = None) -> Any:
    """Run one panel full screen and return its answer (None when cancelled)."""
    app, outcome = _picker_application(picker, input, output)
    app.run()
    return outcome[0]


async def run_picker_async(picker: Any, *, input: Any = None, output: Any = None) -> Any:
    """``run_picker_app`` from inside an event loop."""
    app, outcome = _picker_application(picker, input, output)
    await app.run_async()
    return outcome[0]


class StartupUI(UI):
    """Asking before the app exists (the project-trust prompt, a plugin's ``pi_project_trust``): each
    question is one full-screen picker; ``notify`` writes to stderr, above where the app will start."""

    has_ui = True

    async def select(self, title: str, options: list[str], *, timeout: float | None = None,
                     signal: AbortSignal | None = None) -> str | None:
        return await run_picker_async(Picker(title, [PickItem(option, option) for option in options]))  # type: ignore[no-any-return]

    async def confirm(self, title: str, message: str = "", *, timeout: float | None = None,
                      signal: AbortSignal | None = None) -> bool:
        picker = Picker(f"{title}\n{message}" if message else title, [PickItem("Yes", True), PickItem("No", False)])
        return await run_picker_async(picker) is True

    async def input(self, title: str, placeholder: str = "", *, timeout: float | None = None,
                    signal: AbortSignal | None = None) -> str | None:
        return await run_picker_async(Picker(title, [], free_text=True, placeholder=placeholder))  # type: ignore[no-any-return]

    def notify(self, message: str, level: Literal["info", "warning", "error"] = "info") -> None:
        typeahead = sys.modules.get("pi_core.app.typeahead")
        if typeahead is None:
            sys.stderr.write(message + "\n")
            return
        with typeahead.above():  # above the start-up stand-in editor
            sys.stderr.write(message + "\n")
            sys.stderr.flush()


def _picker_application(picker: Any, input: Any, output: Any) -> tuple[Any, list[Any]]:
    typeahead = sys.modules.get("pi_core.app.typeahead")
    if typeahead is not None:
        typeahead.hold()  # a start-up question takes the terminal; what was typed waits for the editor
    from pi_plugins.interactive.keybindings import default_keybindings
    from prompt_toolkit.application import Application
    from prompt_toolkit.key_binding import KeyBindings
    from prompt_toolkit.layout import Layout, Window
    from prompt_toolkit.layout.controls import FormattedTextControl

    outcome: list[Any] = [None]
    bindings = KeyBindings()
    app: Application[Any]

    def done(value: Any) -> None:
        outcome[0] = value
        app.exit()

    add_panel_keys(bindings, lambda: picker, done, default_keybindings())
    control = FormattedTextControl(lambda: picker.lines(app.output.get_size().columns))
    app = Application(layout=Layout(Window(control)), key_bindings=bindings, full_screen=True,
                      input=input, output=output)
    return app, outcome


def add_panel_keys(bindings: Any, get: Callable[[], Any], done: Callable[[Any], None], keymap: Any,
                   active: Any = None) -> None:
    """Send every key to the panel ``get()`` returns while ``active`` (a prompt_toolkit filter) holds."""
    from pi_plugins.interactive.keybindings import actions_by_key
    from pi_plugins.interactive.panel import key_name, text_of
    from prompt_toolkit.keys import Keys

    by_key = actions_by_key(keymap)
    # Not eager: after Escape, prompt_toolkit waits a moment to see whether it starts Alt+key.
    kwargs: dict[str, Any] = {} if active is None else {"filter": active}

    def forward(event: Any) -> None:
        panel = get()
        if panel is None:
            return
        name = key_name(event)
        presses = [PanelKey(name, by_key.get(name, frozenset()), text_of(event))]
        if name.startswith("escape ") and name not in by_key:
            # Escape and a key typed right after it arrive as one Alt+key: take them as the two keys they were.
            rest = name.split(" ", 1)[1]
            data = event.key_sequence[-1].data
            text = data if isinstance(data, str) and len(data) == 1 and data.isprintable() else None
            presses = [PanelKey("escape", by_key.get("escape", frozenset())), PanelKey(rest, by_key.get(rest, frozenset()), text)]
        for press in presses:
            answer = panel.handle(press)
            if answer is not None:
                done(answer.value)
                return

    bindings.add(Keys.Any, **kwargs)(forward)
    bindings.add("escape", Keys.Any, **kwargs)(forward)
    # Named keys too: the editor's own bindings for them (backspace, arrows) would win over Keys.Any.
    named = {f"c-{c}" for c in "abcdefghijklmnopqrstuvwxyz"} | {f"f{n}" for n in range(13, 25)} | {
        "up", "down", "left", "right", "home", "end", "pageup", "pagedown", "delete", "s-tab", "escape",
        "c-left", "c-right", "c-up", "c-down", "s-up", "s-down", "s-left", "s-right"}
    for name in sorted(named | {n for n in by_key if " " not in n}):
        bindings.add(name, **kwargs)(forward)
    for name in ("up", "down", "left", "right", "c-m", "backspace"):
        bindings.add("escape", name, **kwargs)(forward)


def pick_session(infos: list[Any], *, input: Any = None, output: Any = None) -> Path | None:
    """``pi --resume``: choose one of ``infos`` (SessionInfo) before the interactive app starts."""
    if not infos:
        return None
    return run_picker_app(Picker("Resume session", session_items(infos)), input=input, output=output)
