"""Pickers: a filterable list (models, sessions, tree entries, tools with checkboxes).

``Picker`` is plain state driven by keys; the app draws it inline in place of the editor. For use
before the app exists (``pi --resume``, the project-trust prompt), ``pick_session`` and ``StartupUI``
run one picker as its own full-screen application: the only full-screen takeovers.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pi_plugins.interactive.fuzzy import fuzzy_filter

from pi_core.extension import UI

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

    def result(self) -> Any:
        if self.free_text:
            return self.query
        if self.multi:
            return [item.value for i, item in enumerate(self.items) if i in self.checked]
        item = self.current()
        return item.value if item else None

    def lines(self, width: int) -> list[tuple[str, str]]:
        """(style, text) fragments: title, query line, a window of rows around the cursor, key help."""
        frags: list[tuple[str, str]] = [("bold", self.title + "\n"), ("", "> "), ("", self.query),
                                        ("reverse", " ")]
        if self.free_text:
            if not self.query and self.placeholder:
                frags.append(("#888888", " " + self.placeholder))
            return [*frags, ("", "\n"), ("#888888", "enter confirm · esc cancel")]
        frags.append(("", "\n"))
        visible = self.visible()
        start = max(0, min(self.index - VISIBLE_ROWS // 2, len(visible) - VISIBLE_ROWS))
        for row, item_index in enumerate(visible[start:start + VISIBLE_ROWS], start):
            item = self.items[item_index]
            mark = ("[x] " if item_index in self.checked else "[ ] ") if self.multi else ""
            pointer = "→ " if row == self.index else "  "
            label = (pointer + mark + item.label)[: max(10, width - 2)]
            frags.append(("bold cyan" if row == self.index else "", label))
            if item.hint and len(label) + len(item.hint) + 3 < width:
                frags.append(("#888888", "  " + item.hint))
            frags.append(("", "\n"))
        if not visible:
            frags.append(("#888888", "  no matches\n"))
        elif len(visible) > VISIBLE_ROWS:
            frags.append(("#888888", f"  ({self.index + 1}/{len(visible)})\n"))
        keys = "↑↓ move · space toggle · enter confirm · esc cancel" if self.multi else \
            "↑↓ move · type to filter · enter select · esc cancel"
        frags.append(("#888888", keys))
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


def run_picker_app(picker: Picker, *, input: Any = None, output: Any = None) -> Any:
    """Run one picker full screen and return its result (None when cancelled)."""
    app, outcome = _picker_application(picker, input, output)
    app.run()
    return outcome[0]


async def run_picker_async(picker: Picker, *, input: Any = None, output: Any = None) -> Any:
    """``run_picker_app`` from inside an event loop."""
    app, outcome = _picker_application(picker, input, output)
    await app.run_async()
    return outcome[0]


class StartupUI(UI):
    """Asking before the app exists (the project-trust prompt, a plugin's ``pi_project_trust``): each
    question is one full-screen picker; ``notify`` writes to stderr, above where the app will start."""

    has_ui = True

    async def select(self, title: str, options: list[str], *, timeout: float | None = None) -> str | None:
        return await run_picker_async(Picker(title, [PickItem(option, option) for option in options]))  # type: ignore[no-any-return]

    async def confirm(self, title: str, message: str = "", *, timeout: float | None = None) -> bool:
        picker = Picker(f"{title}\n{message}" if message else title, [PickItem("Yes", True), PickItem("No", False)])
        return await run_picker_async(picker) is True

    async def input(self, title: str, placeholder: str = "", *, timeout: float | None = None) -> str | None:
        return await run_picker_async(Picker(title, [], free_text=True, placeholder=placeholder))  # type: ignore[no-any-return]

    def notify(self, message: str, level: Literal["info", "warning", "error"] = "info") -> None:
        sys.stderr.write(message + "\n")


def _picker_application(picker: Picker, input: Any, output: Any) -> tuple[Any, list[Any]]:
    from prompt_toolkit.application import Application
    from prompt_toolkit.key_binding import KeyBindings
    from prompt_toolkit.layout import Layout, Window
    from prompt_toolkit.layout.controls import FormattedTextControl

    outcome: list[Any] = [None]
    bindings = KeyBindings()
    app: Application[Any]
    def choose(value: Any) -> None:
        outcome[0] = value
        app.exit()

    def lines() -> Any:
        return picker.lines(app.output.get_size().columns)

    add_picker_keys(bindings, lambda: picker, choose, lambda: app.exit())
    control = FormattedTextControl(lines)
    app = Application(layout=Layout(Window(control)), key_bindings=bindings, full_screen=True,
                      input=input, output=output)
    return app, outcome


def add_picker_keys(bindings: Any, get: Callable[[], Picker | None], done: Callable[[Any], None],
                    cancel: Callable[[], None], active: Any = None) -> None:
    """Keys of a picker, live while ``active`` (a prompt_toolkit filter; always when None)."""
    from prompt_toolkit.keys import Keys

    kwargs = {"filter": active, "eager": True} if active is not None else {"eager": True}

    @bindings.add("up", **kwargs)
    def _up(event: Any) -> None:
        get().move(-1)  # type: ignore[union-attr]

    @bindings.add("down", **kwargs)
    def _down(event: Any) -> None:
        get().move(1)  # type: ignore[union-attr]

    @bindings.add("enter", **kwargs)
    def _enter(event: Any) -> None:
        done(get().result())  # type: ignore[union-attr]

    @bindings.add("escape", **kwargs)
    @bindings.add("c-c", **kwargs)
    def _cancel(event: Any) -> None:
        cancel()

    @bindings.add("backspace", **kwargs)
    def _backspace(event: Any) -> None:
        get().backspace()  # type: ignore[union-attr]

    @bindings.add(" ", **kwargs)
    def _space(event: Any) -> None:
        picker = get()
        if picker.multi:  # type: ignore[union-attr]
            picker.toggle()  # type: ignore[union-attr]
        else:
            picker.type(" ")  # type: ignore[union-attr]

    @bindings.add(Keys.Any, **kwargs)
    def _type(event: Any) -> None:
        if event.data.isprintable():
            get().type(event.data)  # type: ignore[union-attr]


def pick_session(infos: list[Any], *, input: Any = None, output: Any = None) -> Path | None:
    """``pi --resume``: choose one of ``infos`` (SessionInfo) before the interactive app starts."""
    if not infos:
        return None
    return run_picker_app(Picker("Resume session", session_items(infos)), input=input, output=output)
