"""Plugins' keyboard shortcuts (``pi_shortcuts``): which ones get a key (none of pi's reserved ones), for the
key bindings (keys.py) and /hotkeys."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pi_plugins.interactive.keybindings import (
    Key,
    Keybindings,
    KeySyntaxError,
    parse_key,
)

# Pi's editor-wide keys a plugin may not take; any other built-in key it takes over, with a warning.
RESERVED = frozenset({
    "app.interrupt", "app.clear", "app.exit", "app.suspend", "app.thinking.cycle", "app.model.cycleForward",
    "app.model.cycleBackward", "app.model.select", "app.tools.expand", "app.thinking.toggle", "app.editor.external",
    "app.message.followUp", "tui.input.submit", "tui.select.confirm", "tui.select.cancel", "tui.input.copy",
    "tui.editor.deleteToLineEnd",
})


@dataclass
class PluginShortcut:
    key: Key
    text: str  # as the plugin wrote it
    description: str
    plugin: str
    handler: Callable[[Any], Any]


def resolve(contributions: list[Any], keymap: Keybindings) -> tuple[list[PluginShortcut], list[str]]:
    """The shortcuts that get bound (a later plugin wins a key), and Pi's warnings for the ones that clash."""
    builtin: dict[Key, tuple[str, bool]] = {}
    for action, keys in keymap.bindings.items():
        for key in keys:
            if key in builtin and builtin[key][1] and action not in RESERVED:
                continue  # the reserved action keeps the key whatever order the table has
            builtin[key] = (action, action in RESERVED)
    chosen: dict[Key, PluginShortcut] = {}
    warnings: list[str] = []
    for plugin, shortcuts in contributions:
        for shortcut in shortcuts or []:
            try:
                key = parse_key(shortcut.key.lower() if len(shortcut.key) > 1 else shortcut.key)
            except KeySyntaxError as err:
                warnings.append(f"Extension shortcut '{shortcut.key}' from {plugin}: {err}")
                continue
            owner = builtin.get(key)
            if owner is not None and owner[1]:
                warnings.append(f"Extension shortcut '{shortcut.key}' from {plugin} conflicts with built-in "
                                "shortcut. Skipping.")
                continue
            if owner is not None:
                warnings.append(f"Extension shortcut conflict: '{shortcut.key}' is built-in shortcut for {owner[0]} "
                                f"and {plugin}. Using {plugin}.")
            if key in chosen:
                warnings.append(f"Extension shortcut conflict: '{shortcut.key}' registered by both "
                                f"{chosen[key].plugin} and {plugin}. Using {plugin}.")
            chosen[key] = PluginShortcut(key, shortcut.key, shortcut.description, plugin, shortcut.handler)
    return list(chosen.values()), warnings
