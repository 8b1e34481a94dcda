"""Plugin components inside the app: ANSI lines become prompt_toolkit fragments, raw keys reach them, overlays float.

A component (``pi_core.ui.Component``) draws ``render(width) -> list[str]`` of ANSI lines and takes keys as
Pi's terminal data (``"\\x1b[A"``, ``"\\r"``, ``"\\x1b"``, text as itself). Keys are taken from the terminal
before prompt_toolkit's key bindings see them (``KeyRouter``), in this order: ``on_terminal_input`` handlers,
the focused overlay, an inline ``custom()`` component, a custom editor; whatever no one takes goes on to
prompt_toolkit as usual.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from prompt_toolkit.formatted_text import ANSI, to_formatted_text
from prompt_toolkit.key_binding.key_processor import KeyPress
from prompt_toolkit.keys import Keys
from prompt_toolkit.layout import Float, Window
from prompt_toolkit.layout.controls import FormattedTextControl

from pi_core.tui.width import CURSOR_MARKER
from pi_core.ui import Component, OverlayOptions

if TYPE_CHECKING:
    from pi_plugins.interactive.app import InteractiveApp

PASS_THROUGH = {Keys.CPRResponse, Keys.Vt100MouseEvent, Keys.WindowsMouseEvent, Keys.Ignore, Keys.SIGINT}


def fragments(lines: list[str]) -> Any:
    """ANSI lines as prompt_toolkit fragments; colours never leak from one line into the next. The cursor
    marker of focused inputs is dropped: they draw their own (reverse video) cursor."""
    text = "\n".join(line + "\x1b[0m" for line in lines).replace(CURSOR_MARKER, "")
    return to_formatted_text(ANSI(text))


def render_lines(component: Any, width: int) -> list[str]:
    """A component's lines at ``width``; a failing component shows its error instead of ending the app."""
    try:
        lines = component.render(max(1, width))
    except Exception as err:  # noqa: BLE001 - plugin code; the error is drawn, not swallowed
        return [f"\x1b[31mcomponent failed: {type(err).__name__}: {err}\x1b[0m"]
    return [str(line) for line in lines or []]


def key_data(press: KeyPress) -> str:
    """The terminal data of a key press as Pi hands it to components."""
    if press.key == Keys.BracketedPaste:
        return f"\x1b[200~{press.data}\x1b[201~"
    return press.data


def parse_keys(data: str) -> list[KeyPress]:
    """Terminal data back into prompt_toolkit key presses (a custom editor passing a key on)."""
    from prompt_toolkit.input.vt100_parser import Vt100Parser

    presses: list[KeyPress] = []
    parser = Vt100Parser(presses.append)
    parser.feed_and_flush(data)
    return presses


def dispose(component: Any) -> None:
    closer = getattr(component, "dispose", None)
    if callable(closer):
        closer()


class Tui:
    """The ``tui`` argument of component factories (``pi_core.ui.TuiHandle``)."""

    def __init__(self, app: InteractiveApp) -> None:
        self._app = app
        self._cooked: Any = None

    def request_render(self) -> None:
        self._app.invalidate()

    @property
    def size(self) -> tuple[int, int]:
        return self._app.width(), self._app.screen_rows()

    @property
    def columns(self) -> int:
        return self.size[0]

    @property
    def rows(self) -> int:
        return self.size[1]

    def stop(self) -> None:
        """Give the terminal to a child process: the app's drawing is erased and the terminal is cooked."""
        app = self._app.app
        if self._cooked is None and app.is_running:
            app.renderer.erase()
            self._cooked = app.input.detach()
            self._cooked.__enter__()
            mode = app.input.cooked_mode()
            mode.__enter__()
            self._cooked = (self._cooked, mode)

    def start(self) -> None:
        """Take the terminal back after ``stop()`` and draw again."""
        if self._cooked is None:
            return
        detached, mode = self._cooked
        self._cooked = None
        mode.__exit__(None, None, None)
        detached.__exit__(None, None, None)
        self._app.app.renderer.reset()
        self._app.invalidate()

    def show_overlay(self, component: Component, options: OverlayOptions | None = None) -> Overlay:
        return self._app.overlays.open(component, options)


class ComponentPanel:
    """An inline ``custom()`` component shown in place of the editor (keys reach it through the KeyRouter)."""

    def __init__(self, component: Any, title: str = "custom") -> None:
        self.component = component
        self.title = title

    def lines(self, width: int) -> Any:
        return fragments(render_lines(self.component, width))

    def handle(self, key: Any) -> None:
        return None


def _size(value: int | str | None, whole: int) -> int | None:
    if value is None:
        return None
    if isinstance(value, str):
        text = value.strip()
        if text.endswith("%"):
            return int(whole * float(text[:-1]) / 100)
        return int(text)
    return int(value)


def _margins(margin: int | dict[str, int]) -> tuple[int, int, int, int]:
    if isinstance(margin, dict):
        return (int(margin.get("top", 0)), int(margin.get("right", 0)), int(margin.get("bottom", 0)),
                int(margin.get("left", 0)))
    return margin, margin, margin, margin


@dataclass
class Overlay:
    """A floating component (``pi_core.ui.OverlayHandle``)."""

    component: Any
    options: OverlayOptions
    stack: OverlayStack
    hidden: bool = False
    focused: bool = True
    lines: list[str] = field(default_factory=list)
    float: Float | None = None
    box: tuple[int, int, int, int] = (0, 0, 0, 0)  # left, top, width, height

    def focus(self) -> None:
        self.stack.raise_(self)
        self.focused = True
        self.stack.app.invalidate()

    def unfocus(self, target: Any = None) -> None:
        self.focused = False
        self.stack.app.invalidate()

    def set_hidden(self, hidden: bool) -> None:
        self.hidden = bool(hidden)
        self.stack.app.invalidate()

    def is_hidden(self) -> bool:
        return self.hidden

    def is_focused(self) -> bool:
        return self.focused and not self.hidden and not self.options.non_capturing

    def hide(self) -> None:
        """Close the overlay for good."""
        self.stack.close(self)

    @property
    def bounds(self) -> dict[str, int]:
        left, top, width, height = self.box
        return {"col": left, "row": top, "width": width, "height": height}

    def shown(self, columns: int) -> bool:
        if self.hidden:
            return False
        test = self.options.visible
        return test is None or bool(test(columns))

    def layout(self, columns: int, rows: int) -> None:
        """Where the overlay goes on a ``columns`` x ``rows`` screen; renders the component once for it."""
        opts = self.options
        top_m, right_m, bottom_m, left_m = _margins(opts.margin)
        room_w, room_h = max(1, columns - left_m - right_m), max(1, rows - top_m - bottom_m)
        width = _size(opts.width, columns) or min(80, room_w)
        width = max(width, opts.min_width or 0)
        width = max(1, min(width, room_w))
        lines = render_lines(self.component, width)
        height = len(lines)
        cap = _size(opts.max_height, rows)
        if cap is not None:
            height = min(height, cap)
        height = max(1, min(height, room_h))
        self.lines = lines[:height]
        anchor = opts.anchor or "center"
        vertical, _, horizontal = anchor.partition("-") if "-" in anchor else ("center", "", "center")
        if vertical in ("left", "right"):  # "left-center", "right-center"
            vertical, horizontal = "center", vertical
        row = _size(opts.row, max(0, room_h - height)) if opts.row is not None else None
        col = _size(opts.col, max(0, room_w - width)) if opts.col is not None else None
        if row is None:
            row = {"top": 0, "bottom": room_h - height}.get(vertical, (room_h - height) // 2)
        if col is None:
            col = {"left": 0, "right": room_w - width}.get(horizontal, (room_w - width) // 2)
        top = max(0, min(rows - height, top_m + row + opts.offset_y))
        left = max(0, min(columns - width, left_m + col + opts.offset_x))
        self.box = (left, top, width, height)
        if self.float is not None:
            self.float.left, self.float.top = left, top
            self.float.width, self.float.height = width, height


class OverlayStack:
    """The open overlays, bottom to top; the app adds their floats to its FloatContainer."""

    def __init__(self, app: InteractiveApp, floats: list[Float]) -> None:
        self.app = app
        self.floats = floats
        self.items: list[Overlay] = []

    def open(self, component: Any, options: OverlayOptions | None = None) -> Overlay:
        overlay = Overlay(component, options or OverlayOptions(), self)
        window = Window(FormattedTextControl(lambda: fragments(overlay.lines)), wrap_lines=False)
        overlay.float = Float(window, left=0, top=0, width=1, height=1, z_index=10)
        self.items.append(overlay)
        self.app.invalidate()
        return overlay

    def close(self, overlay: Overlay) -> None:
        if overlay in self.items:
            self.items.remove(overlay)
            dispose(overlay.component)
        self.app.invalidate()

    def raise_(self, overlay: Overlay) -> None:
        if overlay in self.items:
            self.items.remove(overlay)
            self.items.append(overlay)

    def visible(self, columns: int) -> list[Overlay]:
        return [o for o in self.items if o.shown(columns)]

    def focused(self) -> Overlay | None:
        columns = self.app.width()
        for overlay in reversed(self.items):
            if overlay.is_focused() and overlay.shown(columns):
                return overlay
        return None

    def arrange(self, columns: int, rows: int) -> None:
        """Before each redraw: place every visible overlay and hand its float to the layout."""
        shown = self.visible(columns)
        for overlay in shown:
            overlay.layout(columns, rows)
        self.floats[:] = [o.float for o in shown if o.float is not None]


class KeyRouter:
    """Takes key presses from the terminal input before prompt_toolkit's key bindings see them."""

    def __init__(self, app: InteractiveApp) -> None:
        self.app = app
        self.handlers: list[Callable[[str], Any]] = []  # ui.on_terminal_input

    def install(self, pt_input: Any) -> None:
        read, flush = pt_input.read_keys, pt_input.flush_keys
        pt_input.read_keys = lambda: self.route(read())
        pt_input.flush_keys = lambda: self.route(flush())

    def route(self, presses: list[KeyPress]) -> list[KeyPress]:
        out: list[KeyPress] = []
        for press in presses:
            if press.key in PASS_THROUGH or not self._take(press, out):
                out.append(press)
        return out

    def pass_on(self, data: str) -> None:
        """A custom editor's ``super().handle_input(data)``: pi's own editor and app keys handle ``data`` now,
        so the editor sees the new text as soon as the call returns."""
        self._process(parse_keys(data))

    def _process(self, presses: list[KeyPress]) -> None:
        if presses:
            processor = self.app.app.key_processor
            processor.feed_multiple(presses)
            processor.process_keys()

    def _take(self, press: KeyPress, out: list[KeyPress]) -> bool:
        data = key_data(press)
        for handler in list(self.handlers):
            if self._consumed(self._call(handler, data)):
                return True
        app = self.app
        target: Any = None
        overlay = app.overlays.focused()
        if overlay is not None:
            target = overlay.component
        elif isinstance(app.panel, ComponentPanel):
            target = app.panel.component
        elif app.panel is None and app.custom_editor is not None and app.text_dialog is None:
            earlier = out[:]
            out.clear()
            self._process(earlier)  # keys before this one, in order
            self._call(app.custom_editor.handle_input, data)
            app.invalidate()
            return True
        if target is None:
            return False
        handle = getattr(target, "handle_input", None)
        if callable(handle):
            self._call(handle, data)
        app.invalidate()
        return True

    def _call(self, handler: Callable[[str], Any], data: str) -> Any:
        try:
            return handler(data)
        except Exception as err:  # noqa: BLE001 - plugin code; reported, the key is dropped
            self.app.notify(f"Error: {type(err).__name__}: {err}", "red")
            return None

    @staticmethod
    def _consumed(result: Any) -> bool:
        if result is True:
            return True
        if isinstance(result, dict):
            return bool(result.get("consume"))
        return bool(getattr(result, "consume", False))
