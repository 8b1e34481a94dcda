"""Keys as components receive them: the raw terminal data of one key press, named in Pi's key syntax.

``matches_key(data, "up")``, ``matches_key(data, "ctrl+c")``, ``matches_key(data, "shift+tab")``: the data is
what the terminal sent (``"\\x1b[A"``, ``"\\x03"``, ``"\\x1b[Z"``; the kitty CSI-u and xterm modifyOtherKeys
forms are understood too), the name is Pi's (keybindings.md). Printable text matches itself. ``Keybindings``
maps Pi's configurable actions (``"tui.select.confirm"``) to keys, with Pi's defaults.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, cast

if TYPE_CHECKING:
    from pi_core.ui import Theme

MODIFIERS = ("ctrl", "shift", "alt", "super")
_NAMED = {"escape", "esc", "enter", "return", "tab", "space", "backspace", "delete", "insert", "clear", "home", "end",
          "pageup", "pagedown", "up", "down", "left", "right", *(f"f{n}" for n in range(1, 13))}
_SYMBOLS = set("`-=[]\\;',./!@#$%^&*()_+|~{}:<>?\"")


class KeySyntaxError(ValueError):
    """A key description that is not in Pi's syntax."""


@dataclass(frozen=True)
class Key:
    """One key: its modifiers and its name (lower-case; ``esc`` and ``return`` normalised)."""

    key: str
    ctrl: bool = False
    shift: bool = False
    alt: bool = False
    super: bool = False

    def label(self) -> str:
        """How /hotkeys writes it: ``Ctrl+Shift+P``, ``Alt+Up``, ``Escape``."""
        mods = [m.capitalize() for m in MODIFIERS if getattr(self, m)]
        names = {"pageup": "PageUp", "pagedown": "PageDown"}
        return "+".join([*mods, names.get(self.key, self.key.upper() if len(self.key) == 1 else self.key.capitalize())])

    def id(self) -> str:
        """Pi's spelling: ``ctrl+shift+p``, ``pageUp``."""
        names = {"pageup": "pageUp", "pagedown": "pageDown"}
        return "+".join([*(m for m in MODIFIERS if getattr(self, m)), names.get(self.key, self.key)])


def parse_key(text: str) -> Key:
    """``ctrl+shift+x`` -> Key; raises KeySyntaxError naming what is wrong."""
    if not isinstance(text, str) or not text:
        raise KeySyntaxError(f"{text!r} is not a key")
    if text == "+":
        mods, name = [], "+"
    elif text.endswith("++"):  # "ctrl++": the plus key itself
        mods, name = text[:-2].split("+"), "+"
    else:
        *mods, name = text.split("+")
    flags: dict[str, bool] = {}
    for mod in mods:
        if mod not in MODIFIERS:
            raise KeySyntaxError(f"{text!r}: unknown modifier {mod!r} (use ctrl, shift, alt, super)")
        if flags.get(mod):
            raise KeySyntaxError(f"{text!r}: {mod} is given twice")
        flags[mod] = True
    lowered = name.lower() if len(name) > 1 else name
    if len(lowered) == 1 and lowered.isalpha():
        lowered = lowered.lower()
    if not (lowered in _NAMED or (len(lowered) == 1 and (lowered.isalnum() or lowered in _SYMBOLS))):
        raise KeySyntaxError(f"{text!r}: unknown key {name!r}")
    lowered = {"esc": "escape", "return": "enter"}.get(lowered, lowered)
    return Key(lowered, **flags)


# --- terminal data -> Key ------------------------------------------------------------------------------

_CSI_LETTER = {"A": "up", "B": "down", "C": "right", "D": "left", "H": "home", "F": "end", "E": "clear",
               "P": "f1", "Q": "f2", "R": "f3", "S": "f4"}
_CSI_TILDE = {1: "home", 2: "insert", 3: "delete", 4: "end", 5: "pageup", 6: "pagedown", 7: "home", 8: "end",
              11: "f1", 12: "f2", 13: "f3", 14: "f4", 15: "f5", 17: "f6", 18: "f7", 19: "f8", 20: "f9", 21: "f10",
              23: "f11", 24: "f12"}
_CODEPOINT = {13: "enter", 9: "tab", 27: "escape", 32: "space", 127: "backspace", 8: "backspace"}
_CONTROL = {"\r": Key("enter"), "\n": Key("j", ctrl=True), "\t": Key("tab"), "\x1b": Key("escape"),
            "\x7f": Key("backspace"), "\x08": Key("backspace"), " ": Key("space"), "\x00": Key("space", ctrl=True),
            "\x1c": Key("\\", ctrl=True), "\x1d": Key("]", ctrl=True), "\x1e": Key("^", ctrl=True),
            "\x1f": Key("-", ctrl=True)}
_CSI = re.compile(r"^\x1b(?:\[|O)([0-9;:]*)([A-Za-z~])$")


def _modified(key: Key, param: int) -> Key:
    bits = max(0, param - 1)
    return Key(key.key, ctrl=key.ctrl or bool(bits & 4), shift=key.shift or bool(bits & 1),
               alt=key.alt or bool(bits & 2), super=key.super or bool(bits & 8))


def _from_codepoint(code: int) -> Key | None:
    if code in _CODEPOINT:
        return Key(_CODEPOINT[code])
    if 32 < code < 0x110000:
        char = chr(code)
        return Key(char.lower(), shift=char.isupper()) if char.isalpha() else Key(char)
    return None


def decode_key(data: str) -> Key | None:
    """The key one press of terminal data stands for, or None (text of several characters, a paste)."""
    if not data:
        return None
    if data in _CONTROL:
        return _CONTROL[data]
    if len(data) == 1:
        code = ord(data)
        if 1 <= code <= 26:
            return Key(chr(code + 96), ctrl=True)
        return _from_codepoint(code)
    if data.startswith("\x1b") and len(data) == 2:  # Alt+key sent as an escape prefix
        inner = decode_key(data[1])
        return None if inner is None else Key(inner.key, ctrl=inner.ctrl, shift=inner.shift, alt=True)
    if data.startswith("\x1b\x1b"):  # Alt+arrow in some terminals
        inner = decode_key(data[1:])
        return None if inner is None else Key(inner.key, ctrl=inner.ctrl, shift=inner.shift, alt=True)
    if data == "\x1b[Z":
        return Key("tab", shift=True)
    match = _CSI.match(data)
    if match is None:
        return None
    params = [p.split(":")[0] for p in match.group(1).split(";")] if match.group(1) else []
    numbers = [int(p) if p.isdigit() else 0 for p in params]
    final = match.group(2)
    if final == "u" and numbers:  # kitty keyboard protocol: CSI code ; modifiers u
        key = _from_codepoint(numbers[0])
        return None if key is None else _modified(key, numbers[1] if len(numbers) > 1 else 1)
    if final == "~" and numbers:
        if numbers[0] == 27 and len(numbers) >= 3:  # xterm modifyOtherKeys: CSI 27 ; modifiers ; code ~
            key = _from_codepoint(numbers[2])
            return None if key is None else _modified(key, numbers[1])
        name = _CSI_TILDE.get(numbers[0])
        return None if name is None else _modified(Key(name), numbers[1] if len(numbers) > 1 else 1)
    name = _CSI_LETTER.get(final)
    if name is None:
        return None
    return _modified(Key(name), numbers[-1] if len(numbers) > 1 else 1)


def key_id(data: str) -> str | None:
    """Pi's name of the key in ``data`` (``"ctrl+c"``, ``"up"``, ``"a"``), or None."""
    key = decode_key(data)
    return None if key is None else key.id()


def matches_key(data: str, key: str | Key) -> bool:
    """Whether ``data`` (terminal data of one key press) is ``key`` (Pi's syntax, or a parsed Key)."""
    if isinstance(key, str):
        if len(key) == 1 and data == key:
            return True  # printable text matches itself ("A" is Shift+A)
        try:
            key = parse_key(key)
        except KeySyntaxError:
            return False
    pressed = decode_key(data)
    if pressed is None:
        return False
    return pressed == key


def is_printable(data: str) -> bool:
    """Text to insert (one key or a typed burst), as opposed to a control key or an escape sequence."""
    return bool(data) and not data.startswith("\x1b") and all(ch >= " " and ch != "\x7f" for ch in data)


# --- configurable actions ------------------------------------------------------------------------------

# Pi's defaults (keybindings.md) for the actions the components here carry out.
TUI_KEYBINDINGS: dict[str, tuple[str, ...]] = {
    "tui.select.up": ("up",),
    "tui.select.down": ("down",),
    "tui.select.pageUp": ("pageUp",),
    "tui.select.pageDown": ("pageDown",),
    "tui.select.confirm": ("enter",),
    "tui.select.cancel": ("escape", "ctrl+c"),
    "tui.input.submit": ("enter",),
    "tui.input.newLine": ("shift+enter", "ctrl+j"),
    "tui.input.tab": ("tab",),
    "tui.editor.cursorLeft": ("left", "ctrl+b"),
    "tui.editor.cursorRight": ("right", "ctrl+f"),
    "tui.editor.cursorUp": ("up",),
    "tui.editor.cursorDown": ("down",),
    "tui.editor.cursorWordLeft": ("alt+left", "ctrl+left", "alt+b"),
    "tui.editor.cursorWordRight": ("alt+right", "ctrl+right", "alt+f"),
    "tui.editor.cursorLineStart": ("home", "ctrl+a"),
    "tui.editor.cursorLineEnd": ("end", "ctrl+e"),
    "tui.editor.deleteCharBackward": ("backspace",),
    "tui.editor.deleteCharForward": ("delete", "ctrl+d"),
    "tui.editor.deleteWordBackward": ("ctrl+w", "alt+backspace"),
    "tui.editor.deleteWordForward": ("alt+d", "alt+delete"),
    "tui.editor.deleteToLineStart": ("ctrl+u",),
    "tui.editor.deleteToLineEnd": ("ctrl+k",),
}

_SHORT = {"escape": "esc", "pageup": "pgup", "pagedown": "pgdn"}


class Keybindings:
    """Actions -> keys. ``matches(data, action)`` answers for one key press; unknown actions match nothing.

    The interactive UI hands factories its own keybindings (the user's keybindings.json over the defaults);
    build one here for tests or when none was given: ``Keybindings()`` is Pi's defaults.
    """

    def __init__(self, bindings: Mapping[str, Iterable[str | Key]] | None = None) -> None:
        merged: dict[str, Iterable[str | Key]] = dict(TUI_KEYBINDINGS)
        merged.update(bindings or {})
        self.bindings: dict[str, list[Key]] = {
            action: [k if isinstance(k, Key) else parse_key(k) for k in keys] for action, keys in merged.items()}

    def keys(self, action: str) -> list[Key]:
        return self.bindings.get(action, [])

    def matches(self, data: str, action: str) -> bool:
        return any(matches_key(data, key) for key in self.keys(action))


class KeyMatcher(Protocol):
    """What a component asks of keybindings (``Keybindings``, or the interactive UI's own)."""

    def keys(self, action: str) -> list[Key]: ...
    def matches(self, data: str, action: str) -> bool: ...


def as_keybindings(value: object) -> KeyMatcher:
    """``value`` when it can answer ``matches(data, action)``, else Pi's default keybindings."""
    return cast(KeyMatcher, value) if callable(getattr(value, "matches", None)) else Keybindings()


def key_text(action: str, keybindings: KeyMatcher | None = None) -> str:
    """The keys of ``action`` as a hint writes them: ``esc/ctrl+c``."""
    keys = as_keybindings(keybindings).keys(action)
    return "/".join("+".join([*(m for m in MODIFIERS if getattr(k, m)), _SHORT.get(k.key, k.key)]) for k in keys)


def key_hint(action: str, description: str, theme: Theme | None = None, keybindings: KeyMatcher | None = None) -> str:
    """``esc cancel``: the action's keys (dim) and what they do (muted), coloured by ``theme`` when given."""
    keys = key_text(action, keybindings).split("/")[0]
    if theme is None:
        return f"{keys} {description}"
    return f"{theme.fg('dim', keys)}{theme.fg('muted', ' ' + description)}"
