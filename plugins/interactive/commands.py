"""Slash commands: the table the editor completes from and the dispatcher that runs them.

Sources, later ones never replacing earlier names: built-in commands, plugin commands (the
``pi_commands`` hook, collected by the session as ``session.commands``; their handlers get
``(args, session.ext)``), prompt templates (``/name args``) and skills (``/skill:name``). Templates
and skills have no handler: their text goes to the model through the session's input expansion.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from pi_plugins.interactive.keybindings import Keybindings
    from pi_plugins.interactive.panel import Panel
    from pi_plugins.interactive.shortcuts import PluginShortcut
    from pi_plugins.interactive.view import ChatView
    from prompt_toolkit.buffer import Buffer

    from pi_core.control.session_control import SessionControl
    from pi_core.resources.themes import ThemeSet


class CommandUI(Protocol):
    """What a slash command, the panel it opens and a ``!command`` may do with the interactive UI (the app's
    own parts see more of it: ``pi_plugins.interactive.host.AppHost``)."""

    session: Any
    control: SessionControl
    view: ChatView  # the transcript being drawn (``show_thinking``, the running shell command)
    buffer: Buffer  # the editor's text
    keybindings: Keybindings
    shortcuts: list[PluginShortcut]  # the plugins' keys in force (/hotkeys)
    themes: ThemeSet  # found by the last theme discovery

    def notify(self, text: str, style: str = "dim") -> None: ...
    def show(self, renderable: Any) -> None: ...
    def invalidate(self) -> None: ...  # draw the live part again
    def setting(self, key: str, default: Any = None) -> Any: ...
    def set_hint(self, text: str | None) -> None: ...  # one line above the editor
    def screen_rows(self) -> int: ...
    async def pick(self, title: str, items: list[Any], *, multi: bool = False, checked: set[int] | None = None,
                   index: int = 0, timeout: float | None = None) -> Any: ...
    async def ask(self, title: str, placeholder: str = "", prefill: str = "", *,
                  timeout: float | None = None) -> str | None: ...
    async def confirm(self, title: str, message: str = "") -> bool: ...
    async def open_panel(self, panel: Panel) -> Any: ...  # shown in place of the editor until it answers
    def set_editor_text(self, text: str) -> None: ...
    async def abort(self) -> None: ...  # stop the run, queued messages back in the editor
    def replay(self) -> None: ...  # draw the transcript again after the session's messages changed
    def redraw_transcript(self) -> None: ...  # clear the screen and draw the header and transcript again
    def refresh_commands(self) -> None: ...
    def reload_ui(self) -> None: ...  # keybindings and themes read again (/reload)
    def load_theme(self, name: str | None = None) -> None: ...
    def rebuild_layout(self) -> None: ...  # after a setting that shapes the screen changed
    def exit(self, code: int = 0) -> None: ...


Handler = Callable[[CommandUI, str], "Awaitable[None] | None"]


@dataclass
class MenuCommand:
    """One entry of the interactive command table (plugins declare theirs as pi_core.extension.SlashCommand)."""

    name: str  # without the slash
    description: str
    handler: Handler | None = None  # None: the text is sent as a prompt (templates, skills)
    source: str = "builtin"  # "builtin", "plugin", "template" or "skill"
    argument_hint: str = ""
    complete: Callable[[str], Any] | None = None  # argument completions (a plugin's SlashCommand.complete)


def _plugin_handler(command: Any, session: Any) -> Handler:
    """The plugin's handler through the session: it gets a CommandContext (new_session, fork, wait_for_idle...),
    and a failure is reported as that plugin's extension error."""
    async def run(ui: CommandUI, args: str) -> None:
        await session.run_command(command.name, args)

    return run


# Pi's own interactive commands: a plugin command of one of these names is skipped, as in Pi. The other
# built-ins (/tools, /theme, /exit) are pi's alone and give way to a plugin's command.
PI_BUILTIN_NAMES = frozenset({
    "settings", "model", "tree", "thinking", "scoped-models", "export", "import", "share", "bug", "copy", "name",
    "session", "changelog", "hotkeys", "fork", "clone", "trust", "login", "logout", "new", "compact", "resume",
    "reload", "quit"})


def collect_commands(builtins: list[MenuCommand], session: Any = None, resources: Any = None,
                     warn: Callable[[str], None] = lambda text: None) -> dict[str, MenuCommand]:
    table = {c.name: c for c in builtins}

    def add(command: MenuCommand) -> None:
        holder = table.get(command.name)
        if command.source == "plugin" and holder is not None and holder.source == "builtin":
            if command.name in PI_BUILTIN_NAMES:
                warn(f"Extension command '/{command.name}' conflicts with built-in interactive command. "
                     "Skipping in autocomplete.")
                return
            table[command.name] = command
            return
        if command.name in table:
            warn(f"/{command.name} from {command.source} ignored: the name is taken by {table[command.name].source}")
            return
        table[command.name] = command

    for command in session.commands.values():
        add(MenuCommand(command.name, command.description, _plugin_handler(command, session), "plugin",
                        complete=getattr(command, "complete", None)))
    for template in getattr(resources, "templates", None) or []:
        add(MenuCommand(template.name, template.description or "prompt template", None, "template",
                         template.argument_hint or ""))
    for skill in (getattr(resources, "skills", None) or []) if getattr(resources, "skill_commands", True) else []:
        add(MenuCommand(f"skill:{skill.name}", skill.description, None, "skill"))
    return table


def split_command(text: str) -> tuple[str, str] | None:
    """``/name args`` -> (name, args); None when the text is not a slash command."""
    if not text.startswith("/") or text.startswith("//"):
        return None
    name, _, args = text[1:].partition(" ")
    if not name or "/" in name:  # "/usr/bin/ls is odd" is a message, not a command
        return None
    return name, args.strip()


async def run_command(command: MenuCommand, ui: CommandUI, args: str) -> None:
    assert command.handler is not None
    outcome = command.handler(ui, args)
    if inspect.isawaitable(outcome):
        await outcome
