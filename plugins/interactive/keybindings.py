"""``<agentDir>/keybindings.json`` in Pi's format (keybindings.md): action ids mapped to keys, and the defaults.

``load_keybindings`` merges the file over the defaults (a configured value replaces an action's keys; ``[]``
unbinds it) and reports bad entries. ``to_prompt_toolkit`` turns ``ctrl+shift+p`` into what prompt_toolkit
binds; combinations a plain terminal cannot send (ctrl+shift+letter, super) are read from the kitty and
xterm extended-key sequences, registered under spare function keys.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pi_core.tui.keys import Key, KeySyntaxError, matches_key, parse_key

# (action id, default keys, what /hotkeys says); only actions this UI carries out are listed.
ACTIONS: list[tuple[str, tuple[str, ...], str]] = [
    ("tui.input.submit", ("enter",), "Send (while working: queue a steering message)"),
    ("tui.input.newLine", ("shift+enter", "ctrl+j"), "Insert a new line"),
    ("tui.input.tab", ("tab",), "Complete a path, command or @file"),
    ("tui.editor.undo", ("ctrl+-",), "Undo the last edit"),
    ("app.interrupt", ("escape",), "Abort the run (queued messages return to the editor)"),
    ("app.clear", ("ctrl+c",), "Clear the editor; twice quickly to quit"),
    ("app.exit", ("ctrl+d",), "Quit when the editor is empty"),
    ("app.suspend", ("ctrl+z",), "Suspend to the background"),
    ("app.editor.external", ("ctrl+g",), "Edit the message in the external editor"),
    ("app.clipboard.pasteImage", ("ctrl+v", "alt+v"), "Paste an image from the clipboard"),
    ("app.model.select", ("ctrl+l",), "Select a model"),
    ("app.model.cycleForward", ("ctrl+p",), "Cycle to the next model"),
    ("app.model.cycleBackward", ("shift+ctrl+p",), "Cycle to the previous model"),
    ("app.thinking.cycle", ("shift+tab",), "Cycle the thinking level"),
    ("app.thinking.toggle", ("ctrl+t",), "Collapse or expand thinking blocks"),
    ("app.tools.expand", ("ctrl+o",), "Collapse or expand every tool output"),
    ("app.message.copy", ("ctrl+x",), "Copy the last assistant message"),
    ("app.message.followUp", ("alt+enter",), "Queue a follow-up message"),
    ("app.message.dequeue", ("alt+up",), "Put queued messages back in the editor"),
    ("app.session.new", (), "Start a new session (/new)"),
    ("app.session.tree", (), "Open the session tree (/tree)"),
    ("app.session.fork", (), "Fork the session (/fork)"),
    ("app.session.resume", (), "Resume a session (/resume)"),
    ("app.session.rename", ("ctrl+r",), "Rename the selected session (/resume)"),
    ("app.session.delete", ("ctrl+d",), "Delete the selected session (/resume)"),
    ("app.session.toggleSort", ("ctrl+s",), "Toggle the sort order (/resume)"),
    ("app.session.togglePath", ("ctrl+p",), "Show or hide session paths (/resume)"),
    ("app.session.toggleNamedFilter", ("ctrl+n",), "Show only named sessions (/resume)"),
    ("app.tree.foldOrUp", ("ctrl+left", "alt+left"), "Fold a branch segment, or go to its start (/tree)"),
    ("app.tree.unfoldOrDown", ("ctrl+right", "alt+right"), "Unfold a branch segment, or go to its end (/tree)"),
    ("app.tree.editLabel", ("shift+l",), "Set or clear the selected entry's label (/tree)"),
    ("app.tree.filter.cycleForward", ("ctrl+o",), "Next tree filter (/tree)"),
    ("app.tree.filter.cycleBackward", ("shift+ctrl+o",), "Previous tree filter (/tree)"),
    ("app.tree.filter.default", ("ctrl+d",), "Tree filter: default (/tree)"),
    ("app.tree.filter.noTools", ("ctrl+t",), "Tree filter: no tool results (/tree)"),
    ("app.tree.filter.userOnly", ("ctrl+u",), "Tree filter: user messages only (/tree)"),
    ("app.tree.filter.labeledOnly", ("ctrl+l",), "Tree filter: labeled entries only (/tree)"),
    ("app.tree.filter.all", ("ctrl+a",), "Tree filter: everything (/tree)"),
    ("app.models.enableAll", ("ctrl+a",), "Enable all (matching) models (/scoped-models)"),
    ("app.models.clearAll", ("ctrl+x",), "Clear all (matching) models (/scoped-models)"),
    ("app.models.toggleProvider", ("ctrl+p",), "Toggle the provider's models (/scoped-models)"),
    ("app.models.reorderUp", ("alt+up",), "Move the model up the cycle order (/scoped-models)"),
    ("app.models.reorderDown", ("alt+down",), "Move the model down the cycle order (/scoped-models)"),
    ("app.models.save", ("ctrl+s",), "Save the scoped models to settings (/scoped-models)"),
    ("tui.altScreen.pageUp", ("pageUp",), "Scroll the transcript up by one page (fullscreen)"),
    ("tui.altScreen.pageDown", ("pageDown",), "Scroll the transcript down by one page (fullscreen)"),
    ("tui.altScreen.halfPageUp", (), "Scroll the transcript up by half a page (fullscreen)"),
    ("tui.altScreen.halfPageDown", (), "Scroll the transcript down by half a page (fullscreen)"),
    ("tui.altScreen.lineUp", (), "Scroll the transcript up by one line (fullscreen)"),
    ("tui.altScreen.lineDown", (), "Scroll the transcript down by one line (fullscreen)"),
    ("tui.altScreen.previousPrompt", ("ctrl+shift+up",), "Jump to the previous user message (fullscreen)"),
    ("tui.altScreen.nextPrompt", ("ctrl+shift+down",), "Jump to the next user message (fullscreen)"),
    ("tui.altScreen.search", ("ctrl+shift+f",), "Search the rendered transcript (fullscreen)"),
    ("tui.altScreen.searchNext", ("enter", "ctrl+g"), "Select the next search match while searching"),
    ("tui.altScreen.searchPrevious", ("shift+enter", "ctrl+shift+g"), "Select the previous search match"),
    ("tui.altScreen.searchClose", ("escape",), "Close transcript search"),
    ("tui.altScreen.top", ("ctrl+home",), "Scroll to the beginning of the transcript (fullscreen)"),
    ("tui.altScreen.bottom", ("ctrl+end",), "Scroll to the transcript end and follow new output (fullscreen)"),
    ("tui.select.up", ("up",), "Move up in a list"),
    ("tui.select.down", ("down",), "Move down in a list"),
    ("tui.select.pageUp", ("pageUp",), "Page up in a list"),
    ("tui.select.pageDown", ("pageDown",), "Page down in a list"),
    ("tui.select.confirm", ("enter",), "Confirm the selection"),
    ("tui.select.cancel", ("escape", "ctrl+c"), "Cancel the selection"),
]
DEFAULTS: dict[str, tuple[str, ...]] = {action: keys for action, keys, _ in ACTIONS}
DESCRIPTIONS: dict[str, str] = {action: text for action, _, text in ACTIONS}

@dataclass
class Keybindings:
    bindings: dict[str, list[Key]]
    diagnostics: list[str] = field(default_factory=list)
    path: Path | None = None

    def keys(self, action: str) -> list[Key]:
        return self.bindings.get(action, [])

    def matches(self, data: str, action: str) -> bool:
        """Whether terminal data of one key press is bound to ``action`` (what plugin components ask)."""
        return any(matches_key(data, key) for key in self.keys(action))

    def labels(self, action: str) -> str:
        return ", ".join(key.label() for key in self.keys(action)) or "(unbound)"


def default_keybindings() -> Keybindings:
    return Keybindings({action: [parse_key(k) for k in keys] for action, keys in DEFAULTS.items()})


def load_keybindings(agent_dir: Path) -> Keybindings:
    """The defaults with ``<agentDir>/keybindings.json`` applied; a broken file or entry is reported, not fatal."""
    result = default_keybindings()
    path = agent_dir / "keybindings.json"
    result.path = path
    if not path.is_file():
        return result
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8-sig"))
    except (OSError, json.JSONDecodeError) as err:
        result.diagnostics.append(f"{path}: not valid JSON ({err}); using the default keybindings")
        return result
    if not isinstance(data, dict):
        result.diagnostics.append(f"{path}: expected an object of action ids to keys; using the defaults")
        return result
    for action, value in data.items():
        if action == "$schema":
            continue
        values = [value] if isinstance(value, str) else value
        if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
            result.diagnostics.append(f"{path}: {action}: expected a key or a list of keys")
            continue
        try:
            result.bindings[action] = [parse_key(v) for v in values]
        except KeySyntaxError as err:
            result.diagnostics.append(f"{path}: {action}: {err}")
    return result


# --- prompt_toolkit ---------------------------------------------------------------------------------

_PT_NAMES = {"escape": "escape", "enter": "enter", "tab": "tab", "space": " ", "backspace": "backspace",
             "delete": "delete", "insert": "insert", "home": "home", "end": "end", "pageup": "pageup",
             "pagedown": "pagedown", "up": "up", "down": "down", "left": "left", "right": "right"}
_CTRL_SYMBOLS = {"-": "c-_", "_": "c-_", "]": "c-]", "\\": "c-\\", "^": "c-^", "@": "c-@", "6": "c-^", "2": "c-@"}
_SPARE = [f"f{n}" for n in range(13, 25)]  # function keys no terminal sends: slots for extended sequences
_allocated: dict[str, str] = {}


def _extended(key: Key, code: int) -> str:
    """A spare function key that the kitty (CSI u) and xterm (CSI 27) forms of ``key`` are read as."""
    from prompt_toolkit.input import ansi_escape_sequences
    from prompt_toolkit.keys import Keys

    modifier = 1 + (1 if key.shift else 0) + (2 if key.alt else 0) + (4 if key.ctrl else 0) + (8 if key.super else 0)
    sequences = [f"\x1b[{code};{modifier}u", f"\x1b[27;{modifier};{code}~"]
    slot = _allocated.get(sequences[0])
    if slot is None:
        if not _SPARE:
            raise KeySyntaxError(f"{key.label()}: too many extended key combinations")
        slot = _SPARE.pop(0)
        _allocated[sequences[0]] = slot
        for sequence in sequences:
            ansi_escape_sequences.ANSI_SEQUENCES[sequence] = Keys(slot)
    return slot


def to_prompt_toolkit(key: Key) -> tuple[str, ...]:
    """The prompt_toolkit key sequence for ``key`` (``("escape", "up")`` for Alt+Up)."""
    prefix: tuple[str, ...] = ("escape",) if key.alt and not key.super else ()
    name = key.key
    plain = Key(name, ctrl=key.ctrl, shift=key.shift)
    if key.super or (key.ctrl and key.shift and len(name) == 1):
        code = ord(name.lower()) if len(name) == 1 else {"enter": 13, "tab": 9, "escape": 27, "space": 32}.get(name, 0)
        if not code:
            raise KeySyntaxError(f"{key.label()}: this terminal UI cannot read that combination")
        return (_extended(key, code),)
    if name == "enter" and plain.shift and not plain.ctrl:
        return (*prefix, "c-j")  # Shift+Enter arrives as the newline key (see keys.py)
    if len(name) == 1:
        if plain.ctrl:
            if name.isalpha():
                return (*prefix, f"c-{name}")
            if name in _CTRL_SYMBOLS:
                return (*prefix, _CTRL_SYMBOLS[name])
            raise KeySyntaxError(f"{key.label()}: terminals send no distinct code for it")
        return (*prefix, name.upper() if plain.shift and name.isalpha() else name)
    if name.startswith("f") and name[1:].isdigit():
        return (*prefix, ("c-" if plain.ctrl else "") + ("s-" if plain.shift else "") + name)
    base = _PT_NAMES[name]
    if name == "tab" and plain.shift:
        return (*prefix, "s-tab")
    if name in ("escape", "enter", "tab", "space", "backspace") and (plain.ctrl or plain.shift):
        code = {"escape": 27, "enter": 13, "tab": 9, "space": 32, "backspace": 127}[name]
        return (_extended(key, code),)
    mods = ("c-" if plain.ctrl else "") + ("s-" if plain.shift else "")
    return (*prefix, mods + base)



def actions_by_key(keymap: Keybindings) -> dict[str, frozenset[str]]:
    """Prompt_toolkit key name ("escape up", "c-o") -> the actions bound to it; keys it cannot read are skipped."""
    from prompt_toolkit.keys import KEY_ALIASES

    found: dict[str, set[str]] = {}
    for action, keys in keymap.bindings.items():
        for key in keys:
            try:
                name = " ".join(KEY_ALIASES.get(part, part) for part in to_prompt_toolkit(key))
            except KeySyntaxError:
                continue
            found.setdefault(name, set()).add(action)
    return {name: frozenset(actions) for name, actions in found.items()}
