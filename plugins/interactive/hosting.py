"""Plugin components inside the app: ANSI lines become prompt_toolkit fragments, raw keys reach them, overlays float.

A component (``pi_core.ui.Component``) draws ``render(width) -> list[str]`` of ANSI lines and takes keys as
Pi's terminal data (``"\\x1b[A"``, ``"\\r"``, ``"\\x1b"``, text as itself). Keys are taken from the terminal
before prompt_toolkit's key bindings see them (``KeyRouter``), in this order: ``on_terminal_input`` handlers,
the focused overlay, an inline ``custom()`` component, a custom editor; whatever no one takes goes on to
prompt_toolkit as usual.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from prompt_toolkit.formatted_text import ANSI, to_formatted_text
from prompt_toolkit.key_binding.key_processor import KeyPress
from prompt_toolkit.keys import Keys
from prompt_toolkit.layout import Float, Window
from prompt_toolkit.layout.controls import FormattedTextControl

from pi_core.ui import Component, OverlayOptions

if TYPE_CHECKING:
    from pi_plugins.interactive.chrome import PluginChrome
    from pi_plugins.interactive.panel import Panel
    from prompt_toolkit.application import Application


class ComponentHost(Protocol):
    """What the component hosting needs of the app (``host.AppHost`` is one): its size, its redraws, where keys
    may go instead of the editor, and a place for errors."""

    @property
    def app(self) -> Application[int]: ...
    @property
    def overlays(self) -> OverlayStack: ...
    @property
    def panel(self) -> Panel | None: ...  # a ComponentPanel takes the keys
    @property
    def text_dialog(self) -> object | None: ...  # a plugin's text in the editor: the custom editor steps aside
    @property
    def chrome(self) -> PluginChrome: ...  # ``chrome.editor``: a plugin's editor takes the keys
    def width(self) -> int: ...
    def screen_rows(self) -> int: ...
    def invalidate(self) -> None: ...
    def notify(self, text: str, style: str = "dim") -> None: ...


PASS_THROUGH = {Keys.CPRResponse, Keys.Vt100MouseEvent, Keys.WindowsMouseEvent, Keys.Ignore, Keys.SIGINT}


# OSC and APC strings (hyperlinks, the cursor marker): prompt_toolkit's ANSI parser would print their bodies
# as text, and its screen diffing cannot keep a hyperlink's open and close together, so they are dropped.
TERMINAL_STRINGS = re.compile(r"\x1b[\]_][^\x07\x1b]*(?:\x07|\x1b\\)")


def fragments(lines: list[str]) -> Any:
    """ANSI lines as prompt_toolkit fragments; colours never leak from one line into the next. The cursor
    marker of focused inputs is dropped (they draw their own reverse-video cursor), and so are hyperlinks."""
    text = "\n".join(line + "\x1b[0m" for line in lines)
    return to_formatted_text(ANSI(TERMINAL_STRINGS.sub("", text) if "\x1b" in text else text))


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

    def __init__(self, app: ComponentHost) -> None:
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


PERCENT = re.compile(r"^(\d+(?:\.\d+)?)%$")


def _size(value: int | str | None, whole: int) -> int | None:
    """Cells, or a percentage of ``whole`` ("25%"); None when unset or not a size Pi understands."""
    if value is None or isinstance(value, int):
        return value
    match = PERCENT.match(str(value).strip())
    return int(whole * float(match.group(1)) / 100) if match else None


def _margins(margin: int | dict[str, int]) -> tuple[int, int, int, int]:
    """Top, right, bottom, left; negative margins count as none."""
    if isinstance(margin, dict):
        sides = [int(margin.get(side, 0) or 0) for side in ("top", "right", "bottom", "left")]
    else:
        sides = [int(margin)] * 4
    top, right, bottom, left = (max(0, side) for side in sides)
    return top, right, bottom, left


def _place(position: int | str | None, anchor_side: str, room: int, size: int, margin: int) -> int:
    """One coordinate: an absolute cell (margins ignored, as in Pi), a percentage of the free room inside the
    margins (0% = first cell, 100% = last that still fits), or the anchor's side ("start", "end", "center")."""
    if isinstance(position, int):
        return position
    free = max(0, room - size)
    if position is not None:
        match = PERCENT.match(position.strip())
        if match is None:  # not a percentage: centred, like Pi
            return margin + (room - size) // 2
        return margin + int(free * float(match.group(1)) / 100)
    if anchor_side == "start":
        return margin
    if anchor_side == "end":
        return margin + room - size
    return margin + (room - size) // 2


ANCHOR_SIDES = {  # anchor -> (vertical side, horizontal side)
    "top-left": ("start", "start"), "top-center": ("start", "center"), "top-right": ("start", "end"),
    "left-center": ("center", "start"), "center": ("center", "center"), "right-center": ("center", "end"),
    "bottom-left": ("end", "start"), "bottom-center": ("end", "center"), "bottom-right": ("end", "end"),
}


@dataclass(eq=False)
class Overlay:
    """A floating component (``pi_core.ui.OverlayHandle``).

    Focus follows Pi's TUI: one component has the keyboard (``OverlayStack.focus``; None = the editor or an
    inline component). A capturing overlay takes it when it opens or is shown again; a non-capturing one only
    through ``focus()``. Losing it hands it to the front-most visible capturing overlay, else to whatever had
    it when this one opened. The focused overlay is drawn in front of the others.
    """

    component: Any
    options: OverlayOptions
    stack: OverlayStack
    hidden: bool = False
    order: int = 0  # drawing order, higher in front; raised by focus()
    pre_focus: Any = None  # what had the keyboard when this overlay opened
    lines: list[str] = field(default_factory=list)
    float: Float | None = None
    box: tuple[int, int, int, int] = (0, 0, 0, 0)  # left, top, width, height

    def focus(self) -> None:
        if self not in self.stack.items or not self.shown(self.stack.app.width()):
            return
        self.stack.raise_(self)
        self.stack.set_focus(self.component)

    def unfocus(self, target: Any = None) -> None:
        """Give the keyboard to ``target``, or to the front-most capturing overlay / what had it before."""
        if self.stack.focus is not self.component:
            return
        front = self.stack.front()
        fallback = front.component if front is not None and front is not self else self.pre_focus
        self.stack.set_focus(target if target is not None else fallback)

    def set_hidden(self, hidden: bool) -> None:
        hidden = bool(hidden)
        if hidden == self.hidden:
            return
        self.hidden = hidden
        if hidden:
            self.stack.release(self)
        elif not self.options.non_capturing and self.shown(self.stack.app.width()):
            self.stack.raise_(self)
            self.stack.set_focus(self.component)
        self.stack.app.invalidate()

    def is_hidden(self) -> bool:
        return self.hidden

    def is_focused(self) -> bool:
        return self.stack.focus is self.component

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
        width = _size(opts.width, columns)
        if width is None:
            width = min(80, room_w)
        width = max(1, min(max(width, opts.min_width or 0), room_w))
        cap = _size(opts.max_height, rows)
        lines = render_lines(self.component, width)
        if cap is not None:
            lines = lines[:max(1, min(cap, room_h))]
        height = len(lines)
        vertical, horizontal = ANCHOR_SIDES.get(opts.anchor or "center", ("center", "center"))
        top = _place(opts.row, vertical, room_h, height, top_m) + opts.offset_y
        left = _place(opts.col, horizontal, room_w, width, left_m) + opts.offset_x
        top = max(top_m, min(top, rows - bottom_m - height))
        left = max(left_m, min(left, columns - right_m - width))
        self.lines = lines[:max(1, rows - top)]
        self.box = (left, top, width, height)
        if self.float is not None:
            self.float.left, self.float.top = left, top
            self.float.width, self.float.height = width, max(1, len(self.lines))


class OverlayStack:
    """The open overlays and who has the keyboard; the app adds their floats to its FloatContainer."""

    def __init__(self, app: ComponentHost, floats: list[Float]) -> None:
        self.app = app
        self.floats = floats
        self.items: list[Overlay] = []
        self.focus: Any = None  # the component that takes keys; None = the editor / inline component
        self._order = 0

    def open(self, component: Any, options: OverlayOptions | None = None) -> Overlay:
        if options is None:  # Pi's fallback: a component may say how wide it wants to be
            wanted = getattr(component, "width", None)
            options = OverlayOptions(width=wanted if isinstance(wanted, (int, str)) else None)
        overlay = Overlay(component, options, self, pre_focus=self.focus)
        window = Window(FormattedTextControl(lambda: fragments(overlay.lines)), wrap_lines=False)
        overlay.float = Float(window, left=0, top=0, width=1, height=1, z_index=10)
        self.items.append(overlay)
        self.raise_(overlay)
        if not options.non_capturing and overlay.shown(self.app.width()):
            self.set_focus(component)
        self.app.invalidate()
        return overlay

    def close(self, overlay: Overlay) -> None:
        if overlay in self.items:
            self.release(overlay)
            self.items.remove(overlay)
            for other in self.items:  # whoever would fall back to the closed overlay falls back further
                if other.pre_focus is overlay.component:
                    other.pre_focus = overlay.pre_focus
            dispose(overlay.component)
        self.app.invalidate()

    def raise_(self, overlay: Overlay) -> None:
        self._order += 1
        overlay.order = self._order

    def set_focus(self, component: Any) -> None:
        """Move the keyboard; a component with a ``focused`` attribute is told (Pi's Focusable), the inline
        ``custom()`` component too when the keyboard leaves it for an overlay or comes back to it."""
        base = self.app.panel.component if isinstance(self.app.panel, ComponentPanel) else None
        old = self.focus if self.focus is not None else base
        new = component if component is not None else base
        self.focus = component
        if old is not None and old is not new and hasattr(old, "focused"):
            old.focused = False
        if new is not None and hasattr(new, "focused"):
            new.focused = True
        self.app.invalidate()

    def release(self, overlay: Overlay) -> None:
        """``overlay`` is going away or hidden: if it had the keyboard, pass it on."""
        if self.focus is overlay.component:
            front = self.front(exclude=overlay)
            self.set_focus(front.component if front is not None else overlay.pre_focus)

    def front(self, exclude: Overlay | None = None) -> Overlay | None:
        """The front-most visible capturing overlay."""
        columns = self.app.width()
        candidates = [o for o in self.items if o is not exclude and not o.options.non_capturing and o.shown(columns)]
        return max(candidates, key=lambda o: o.order, default=None)

    def visible(self, columns: int) -> list[Overlay]:
        return sorted((o for o in self.items if o.shown(columns)), key=lambda o: o.order)

    def target(self) -> Any:
        """The component keys go to, or None for the editor / inline component. A focused overlay that is no
        longer visible (hidden, or ``visible(columns)`` said no) hands the keyboard on first."""
        current = next((o for o in self.items if o.component is self.focus), None)
        if current is not None and not current.shown(self.app.width()):
            front = self.front()
            self.set_focus(front.component if front is not None else current.pre_focus)
        return self.focus

    def arrange(self, columns: int, rows: int) -> None:
        """Before each redraw: place every visible overlay and hand its float to the layout."""
        shown = self.visible(columns)
        for overlay in shown:
            overlay.layout(columns, rows)
        self.floats[:] = [o.float for o in shown if o.float is not None]


class KeyRouter:
    """Takes key presses from the terminal input before prompt_toolkit's key bindings see them."""

    def __init__(self, app: ComponentHost) -> None:
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
        if out and out[-1].key == Keys.Escape and presses[-1].key == Keys.Escape:
            # Nothing came with this Escape (Alt+/ arrives as ESC and "/" in one read): it is a key of its own,
            # not the Meta prefix of the next key, so Esc then "/" typed quickly still types the "/".
            out.append(KeyPress(Keys.Ignore, ""))
        return out

    def replay(self, data: str) -> None:
        """Keys typed before the app ran (the start-up stand-in editor's): routed as if read now, in order."""
        self._process(self.route(parse_keys(data)))

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
        target: Any = app.overlays.target()
        if target is None and isinstance(app.panel, ComponentPanel):
            target = app.panel.component
        elif target is None and app.panel is None and app.chrome.editor is not None and app.text_dialog is None:
            earlier = out[:]
            out.clear()
            self._process(earlier)  # keys before this one, in order
            self._call(app.chrome.editor.handle_input, data)
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
