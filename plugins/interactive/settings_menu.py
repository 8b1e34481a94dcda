"""/settings: the settings Pi shows there, each cycled in place and saved to the global settings file
(locked merge writes, so another pi's changes survive); /theme picks a theme the same way."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pi_plugins.interactive import diagrams, style
from pi_plugins.interactive.panel import Done, PanelKey, notices, visible_window

if TYPE_CHECKING:
    from pi_plugins.interactive.commands import CommandUI

VISIBLE = 12


@dataclass
class Setting:
    key: str
    label: str
    options: Callable[[Any], list[Any]]  # the values, given the app (themes are found at run time)
    default: Any
    describe: str = ""
    apply: Callable[[Any, Any], None] | None = None  # (app, value): make the change visible at once
    needs_images: bool = False  # shown only on a terminal that draws images (as Pi)

    def shown(self, value: Any) -> str:
        if isinstance(value, bool):
            return "on" if value else "off"
        if self.key == "markdown.codeBlockIndent":
            return f"{len(value)} spaces" if value else "none"
        return str(value)


def _fixed(*values: Any) -> Callable[[Any], list[Any]]:
    return lambda app: list(values)


def _apply_theme(app: CommandUI, name: Any) -> None:
    app.load_theme(str(name))


def _relayout(app: CommandUI, value: Any) -> None:
    app.rebuild_layout()


def _redisplay(app: CommandUI, value: Any) -> None:
    """A display setting changed: the transcript is drawn again with it."""
    from pi_plugins.interactive import display

    display.load(app.setting)
    app.redraw_transcript()


def _apply_indent(app: CommandUI, value: Any) -> None:
    style.code_block_indent = str(value)


def _apply_warming(app: CommandUI, value: Any) -> None:
    if app.session.cache_warmer is not None:
        app.session.cache_warmer.on_mode_changed()


def _apply_thinking(app: CommandUI, value: Any) -> None:
    app.view.show_thinking = not bool(value)


SETTINGS: list[Setting] = [
    Setting("theme", "Theme", lambda app: app.themes.names(), "system", "Colours of the UI and of HTML exports",
            _apply_theme),
    Setting("hideThinkingBlock", "Hide thinking", _fixed(False, True), False, "Thinking shows as one line",
            _apply_thinking),
    Setting("markdown.mermaid", "Mermaid diagrams", _fixed(*diagrams.MODES), "streaming",
            "Render Mermaid code blocks as Unicode diagrams", lambda app, v: setattr(diagrams, "mode", str(v))),
    Setting("quietStartup", "Quiet startup", _fixed(False, True, "header"), False,
            "Hide the startup header (header: keep it, hide the resource listing)"),
    Setting("collapseChangelog", "Collapse changelog", _fixed(False, True), False, "Condensed changelog after updates"),
    Setting("doubleEscapeAction", "Double-escape action", _fixed("tree", "fork", "none"), "tree",
            "Escape twice on an empty editor"),
    Setting("treeFilterMode", "Tree filter mode", _fixed("default", "no-tools", "user-only", "labeled-only", "all"),
            "default", "The filter /tree opens with"),
    Setting("steeringMode", "Steering mode", _fixed("one-at-a-time", "all"), "one-at-a-time",
            "How queued steering messages are delivered", lambda app, v: app.control.set_steering_mode(v)),
    Setting("followUpMode", "Follow-up mode", _fixed("one-at-a-time", "all"), "one-at-a-time",
            "How queued follow-up messages are delivered", lambda app, v: app.control.set_follow_up_mode(v)),
    Setting("transport", "Transport", _fixed("sse", "websocket", "websocket-cached", "auto"), "auto",
            "Preferred transport for providers that support multiple transports",
            lambda app, v: setattr(app.session.agent.options, "transport", v)),
    Setting("compaction.enabled", "Auto-compact", _fixed(True, False), True, "Compact when the context fills up",
            lambda app, v: app.control.set_auto_compaction(bool(v))),
    Setting("retry.enabled", "Auto-retry", _fixed(True, False), True, "Retry transient provider failures",
            lambda app, v: app.control.set_auto_retry(bool(v))),
    Setting("editorPaddingX", "Editor padding", _fixed(0, 1, 2, 3), 0, "Cells left and right of the editor",
            _relayout),
    Setting("autocompleteMaxVisible", "Autocomplete max items", _fixed(3, 5, 8, 10, 15, 20), 5,
            "Completion rows shown at once", _relayout),
    Setting("showHardwareCursor", "Show hardware cursor", _fixed(False, True), False,
            "Use the terminal's cursor instead of the drawn one", _relayout),
    Setting("outputPad", "Output padding", _fixed(0, 1), 1,
            "Horizontal padding for messages, tool output, and command output", _redisplay),
    Setting("terminal.clearOnShrink", "Clear on shrink", _fixed(False, True), False,
            "Clear empty rows when content shrinks (may cause flicker)", _redisplay),
    Setting("terminal.showTerminalProgress", "Terminal progress", _fixed(False, True), False,
            "Show OSC 9;4 progress in the terminal tab while the agent works",
            lambda app, v: setattr(app.progress, "enabled", bool(v))),
    Setting("markdown.codeBlockIndent", "Code block indent", _fixed("  ", "    ", ""), "  ",
            "Indent of rendered code blocks", _apply_indent),
    Setting("terminal.showImages", "Show images", _fixed(True, False), True, "Render images inline in the terminal",
            _redisplay, needs_images=True),
    Setting("terminal.imageWidthCells", "Image width", _fixed(60, 80, 120), 60,
            "Preferred inline image width in terminal cells", _redisplay, needs_images=True),
    Setting("images.autoResize", "Auto-resize images", _fixed(True, False), True, "Shrink images to 2000x2000"),
    Setting("images.blockImages", "Block images", _fixed(False, True), False, "Never send images to the model"),
    Setting("enableSkillCommands", "Skill commands", _fixed(True, False), True, "Offer skills as /skill:name"),
    Setting("cacheWarming", "Cache warming", _fixed("idle", "streaming", "off"), "idle",
            "Keep prompt caches warm: while the agent runs (streaming), and between runs while it pays (idle)",
            _apply_warming),
    Setting("showCacheMissNotices", "Cache miss notices", _fixed(False, True), False,
            "Transcript notices for cache misses, cache warming and compaction costs"),
    Setting("warnings.anthropicExtraUsage", "Anthropic extra usage warning", _fixed(True, False), True,
            "Warn when an Anthropic subscription sign-in bills requests as extra usage"),
]


class SettingsPanel:
    title = "Settings"

    def __init__(self, app: CommandUI, settings: list[Setting] | None = None) -> None:
        self.app = app
        from pi_core.tui import terminal

        drawn = terminal.capabilities().images is not None
        self.items = settings or [item for item in SETTINGS if drawn or not item.needs_images]
        self.index = 0
        self.message = ""

    def value(self, item: Setting) -> Any:
        return self.app.setting(item.key, item.default)

    def change(self, step: int) -> None:
        item = self.items[self.index]
        options = item.options(self.app)
        current = self.value(item)
        position = options.index(current) if current in options else -1
        new = options[(position + step) % len(options)]
        settings = self.app.session.settings
        if settings is None:
            self.message = "No settings file in this run: the change lasts until pi exits"
        else:
            settings.set(item.key, new, "global")
            errors = settings.drain_errors() if hasattr(settings, "drain_errors") else []
            self.message = f"Not saved: {errors[0]}" if errors else f"Saved {item.key} = {item.shown(new)}"
        if item.apply is not None:
            item.apply(self.app, new)

    def handle(self, key: PanelKey) -> Done | None:
        if key.is_("tui.select.cancel"):
            return Done(None)
        if key.is_("tui.select.up"):
            self.index = (self.index - 1) % len(self.items)
        elif key.is_("tui.select.down"):
            self.index = (self.index + 1) % len(self.items)
        elif key.is_("tui.select.confirm") or key.text == " " or key.name == "right":
            self.change(1)
        elif key.name == "left":
            self.change(-1)
        return None

    def lines(self, width: int) -> list[tuple[str, str]]:
        muted, accent = style.pt("muted"), style.pt("accent")
        frags: list[tuple[str, str]] = [("bold", "Settings\n")]
        label_width = max(len(s.label) for s in self.items) + 2
        for row in visible_window(self.index, len(self.items), VISIBLE):
            item = self.items[row]
            selected = row == self.index
            pointer = "→ " if selected else "  "
            frags.append((f"bold {accent}" if selected else "", (pointer + item.label).ljust(label_width + 2)))
            frags.append((accent if selected else "", item.shown(self.value(item))))
            frags.append(("", "\n"))
        current = self.items[self.index]
        frags.append((muted, f"  {current.describe}\n" if current.describe else "\n"))
        frags.extend(notices(self.message))
        frags.append((muted, "↑↓ move · enter/space/→ next value · ← previous · esc close"))
        return frags


async def cmd_settings(ui: CommandUI, args: str) -> None:
    await ui.open_panel(SettingsPanel(ui))


async def cmd_theme(ui: CommandUI, args: str) -> None:
    from pi_plugins.interactive.pickers import PickItem

    names = ui.themes.names()
    if args.strip():
        chosen = args.strip()
        if chosen not in names and "/" not in chosen:
            ui.notify(f'Theme "{chosen}" not found. Available: {", ".join(names)}', "red")
            return
    else:
        current = style.current().name
        items = [PickItem(n, n, hint="✓" if n == current else (str(ui.themes.themes[n].path or "built-in")
                                                                 if n in ui.themes.themes else "follows the terminal"))
                 for n in names]
        chosen = await ui.pick("Theme", items, index=names.index(current) if current in names else 0)
        if chosen is None:
            return
    if ui.session.settings is not None:
        ui.session.settings.set("theme", chosen, "global")
    ui.load_theme(chosen)
    ui.notify(f"Theme: {chosen}", "green")
