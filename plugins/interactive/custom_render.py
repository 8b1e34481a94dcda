"""Plugins' custom messages and custom session entries in the transcript (``pi_message_renderers``,
``pi_entry_renderers``), live and when the transcript is drawn again.

A custom message sent while a run streams arrives as session events (the view draws it); one recorded while
pi is idle, and every custom entry, only reaches the session file, so ``EntryWatcher`` looks at the entries
appended since it last looked (after each command, key and event) and draws the new ones.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pi_plugins.interactive import style

from pi_core.render import EntryRenderer, MessageRenderer, RenderOptions


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = []
    for block in content or []:
        text = block.get("text") if isinstance(block, dict) else getattr(block, "text", None)
        if isinstance(text, str):
            parts.append(text)
    return "\n".join(parts)


def as_renderable(drawn: Any, width: int) -> Any:
    """What a renderer returned, as something rich prints: a str (ANSI kept), a Component, a rich renderable."""
    from rich.text import Text

    if drawn is None:
        return None
    if isinstance(drawn, str):
        return Text.from_ansi(drawn)
    if callable(getattr(drawn, "render", None)) and not hasattr(drawn, "__rich_console__"):
        from pi_plugins.interactive.hosting import render_lines

        return Text.from_ansi("\n".join(render_lines(drawn, width)))
    return drawn


class CustomRenderers:
    """The renderers plugins contributed, by custom type (the first plugin's wins)."""

    def __init__(self, session: Any, theme: Callable[[], Any], width: Callable[[], int]) -> None:
        self.messages: dict[str, MessageRenderer] = {}
        self.entries: dict[str, EntryRenderer] = {}
        self.session, self.theme, self.width = session, theme, width
        self.collect()

    def collect(self) -> None:
        """Ask the plugins (again, when the session was replaced: a class plugin's renderers are its instance's)."""
        self.messages, self.entries = {}, {}
        plugins = self.session.plugins
        for _plugin, found in plugins.call_sync("pi_message_renderers"):
            for renderer in found or []:
                self.messages.setdefault(renderer.custom_type, renderer)
        for _plugin, found in plugins.call_sync("pi_entry_renderers"):
            for renderer in found or []:
                self.entries.setdefault(renderer.custom_type, renderer)

    def _run(self, draw: Callable[..., Any], item: Any, expanded: bool) -> Any:
        from rich.text import Text

        try:
            return as_renderable(draw(item, RenderOptions(expanded=expanded), self.theme()), self.width())
        except Exception as err:  # noqa: BLE001 - plugin code; the error is shown instead
            return Text(f"renderer failed: {type(err).__name__}: {err}", style=style.fg("error"))

    def message(self, message: Any, expanded: bool) -> Any:
        """A displayed custom message: the plugin's drawing, or the type label over the content."""
        custom_type = str(getattr(message, "customType", None) or "custom")
        renderer = self.messages.get(custom_type)
        if renderer is not None:
            drawn = self._run(renderer.render, message, expanded)
            if drawn is not None:
                return drawn
        from pi_plugins.interactive.display import padded
        from rich.console import Group
        from rich.text import Text

        label = Text(f"[{custom_type}]", style=f"bold {style.fg('customMessageLabel')}")
        body = style.markdown(_text_of(getattr(message, "content", "")))  # as Pi: the content is Markdown
        return padded(Group(label, body), "customMessageBg")

    def entry(self, entry: dict[str, Any], expanded: bool) -> Any:
        """A custom entry (the session file's dict): drawn only by its plugin's renderer, which gets the typed
        ``CustomEntry`` (an entry without a renderer stays invisible)."""
        renderer = self.entries.get(str(entry.get("customType")))
        if renderer is None:
            return None
        from pi_core.hookspecs.entries import entry_from_json

        return self._run(renderer.render, entry_from_json(entry), expanded)


class EntryWatcher:
    """Draws the custom entries (``ctx.append_entry``) appended to the session since the last look. Custom
    messages are not looked for: they come as ``message_start`` events, also when sent while idle."""

    def __init__(self, session: Any, renderers: CustomRenderers, commit: Callable[[Any], None],
                 expanded: Callable[[], bool]) -> None:
        self.session, self.renderers, self.commit, self.expanded = session, renderers, commit, expanded
        self.seen: set[str] = set()
        self.reset()

    def reset(self) -> None:
        """Everything in the session now counts as drawn (after a replay, a switch, a new session)."""
        self.seen = {str(e.get("id")) for e in self._entries()}

    def _entries(self) -> list[dict[str, Any]]:
        store = getattr(self.session, "store", None)
        getter = getattr(store, "get_entries", None)
        return list(getter()) if callable(getter) else []

    def check(self) -> None:
        for entry in self._entries():
            entry_id = str(entry.get("id"))
            if entry_id in self.seen:
                continue
            self.seen.add(entry_id)
            drawn = self.draw(entry)
            if drawn is not None:
                self.commit(drawn)

    def draw(self, entry: dict[str, Any]) -> Any:
        kind = entry.get("type")
        if kind == "custom":
            return self.renderers.entry(entry, self.expanded())
        return None


def entry_time_ms(entry: dict[str, Any]) -> float:
    """An entry's ISO timestamp in epoch milliseconds (0 when it has none)."""
    from datetime import datetime

    stamp = entry.get("timestamp")
    if not isinstance(stamp, str):
        return 0.0
    try:
        return datetime.fromisoformat(stamp).timestamp() * 1000
    except ValueError:
        return 0.0
