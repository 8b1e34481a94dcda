"""The built-in slash commands. Each handler gets the UI (see ``CommandUI``) and the argument text."""

from __future__ import annotations

import os
import shutil
import subprocess

from pi_plugins.interactive.commands import CommandUI, MenuCommand
from pi_plugins.interactive.models_panel import cmd_scoped_models
from pi_plugins.interactive.pickers import PickItem
from pi_plugins.interactive.resume_panel import cmd_resume
from pi_plugins.interactive.session_commands import (
    cmd_changelog,
    cmd_clone,
    cmd_export,
    cmd_hotkeys,
    cmd_import,
    cmd_session,
    cmd_share,
)
from pi_plugins.interactive.settings_menu import cmd_settings, cmd_theme
from pi_plugins.interactive.tree_panel import cmd_tree


async def cmd_model(ui: CommandUI, args: str) -> None:
    import asyncio

    ops = ui.control
    models = await asyncio.to_thread(ops.available_models, True)  # probes local servers: off the UI loop
    if args:
        from pi_core.models.resolution import match_model

        chosen = match_model(args, models)
        if chosen is None:
            ui.notify(f'No model matches "{args}"', "red")
            return
    else:
        current = (ui.session.model.provider, ui.session.model.id)
        items = [PickItem(f"{m.provider}/{m.id}", m, hint=("✓ " if (m.provider, m.id) == current else "") + m.name)
                 for m in models]
        chosen = await ui.pick("Select model", items)
        if chosen is None:
            return
    ops.set_model(chosen.provider, chosen.id)
    ui.notify(f"Model: {chosen.provider}/{chosen.id}", "green")


async def cmd_thinking(ui: CommandUI, args: str) -> None:
    from pi_core.models.thinking import supported_thinking_levels

    levels = supported_thinking_levels(ui.session.model)
    level = args or await ui.pick("Thinking level", [PickItem(lvl, lvl) for lvl in levels])
    if level is None:
        return
    if level not in levels:
        ui.notify(f'Invalid thinking level "{level}". Valid values: {", ".join(levels)}', "red")
        return
    ui.control.set_thinking_level(level)
    ui.notify(f"Thinking level: {ui.session.agent.state.thinking_level}", "green")


async def cmd_tools(ui: CommandUI, args: str) -> None:
    names = list(ui.session.config.all_tools)
    active = {t.name for t in ui.session.active_tools}
    items = [PickItem(n, n, hint=(ui.session.config.all_tools[n].description or "").split("\n")[0][:60])
             for n in names]
    chosen = await ui.pick("Active tools", items, multi=True, checked={i for i, n in enumerate(names) if n in active})
    if chosen is None:
        return
    ui.session.set_active_tools(chosen)
    ui.notify(f"Active tools: {', '.join(chosen) or '(none)'}", "green")


async def cmd_new(ui: CommandUI, args: str) -> None:
    await ui.control.new_session(None)
    ui.notify("New session started", "green")


async def cmd_fork(ui: CommandUI, args: str) -> None:
    choices = ui.control.fork_messages()
    if not choices:
        ui.notify("No user message to fork from", "yellow")
        return
    items = [PickItem(c["text"].replace("\n", " ")[:100], c["entryId"]) for c in reversed(choices)]
    entry_id = await ui.pick("Fork from message", items)
    if entry_id is None:
        return
    text, _cancelled = await ui.control.fork(entry_id)
    ui.replay()
    if text:
        ui.set_editor_text(text)
    ui.notify("Forked to a new session", "green")


async def cmd_compact(ui: CommandUI, args: str) -> None:
    await ui.session.compact(args or None)  # progress and outcome arrive as compaction_start/end events


def cmd_name(ui: CommandUI, args: str) -> None:
    if not args:
        ui.notify("Usage: /name <session name>", "yellow")
        return
    ui.control.set_session_name(args)
    ui.notify(f"Session name: {args.strip()}", "green")


def copy_to_clipboard(text: str) -> str:
    """Copy via the first clipboard tool found, else the terminal's OSC 52; returns what was used."""
    for command in (["pbcopy"], ["wl-copy"], ["xclip", "-selection", "clipboard"], ["xsel", "-ib"]):
        if shutil.which(command[0]) and (command[0] != "wl-copy" or os.environ.get("WAYLAND_DISPLAY")) \
                and (not command[0].startswith("xs") and command[0] != "xclip" or os.environ.get("DISPLAY")):
            subprocess.run(command, input=text.encode(), check=True, timeout=5)
            return command[0]
    import base64
    import sys

    sys.stdout.write(f"\x1b]52;c;{base64.b64encode(text.encode()).decode()}\x07")
    sys.stdout.flush()
    return "OSC 52"


def cmd_copy(ui: CommandUI, args: str) -> None:
    text = ui.control.last_assistant_text()
    if not text:
        ui.notify("No assistant message to copy", "yellow")
        return
    how = copy_to_clipboard(text)
    ui.notify(f"Copied the last reply to the clipboard ({how})", "green")


async def cmd_reload(ui: CommandUI, args: str) -> None:
    await ui.session.reload()
    ui.refresh_commands()
    ui.reload_ui()
    ui.notify("Reloaded keybindings, plugins, skills, prompt templates, themes and context files", "green")


def cmd_quit(ui: CommandUI, args: str) -> None:
    ui.exit()


BUILTIN_COMMANDS: list[MenuCommand] = [
    MenuCommand("settings", "Open settings", cmd_settings),
    MenuCommand("theme", "Select a theme", cmd_theme, argument_hint="[name]"),
    MenuCommand("model", "Select a model (picker, or /model <pattern>)", cmd_model, argument_hint="[pattern]"),
    MenuCommand("thinking", "Set the thinking level", cmd_thinking, argument_hint="[level]"),
    MenuCommand("scoped-models", "Configure the models used by interactive cycling", cmd_scoped_models),
    MenuCommand("tools", "Turn tools on or off", cmd_tools),
    MenuCommand("new", "Start a new session", cmd_new),
    MenuCommand("resume", "Resume another session (tab: every project)", cmd_resume),
    MenuCommand("session", "Show session file, messages, tokens and cost", cmd_session),
    MenuCommand("tree", "Browse the session tree and continue from any entry", cmd_tree),
    MenuCommand("fork", "Start a new session from an earlier user message", cmd_fork),
    MenuCommand("clone", "Duplicate the current session at its current position", cmd_clone),
    MenuCommand("import", "Import a JSONL session, preserving its ID and working directory", cmd_import,
                argument_hint="<path.jsonl>"),
    MenuCommand("compact", "Summarize the conversation to free context", cmd_compact,
                 argument_hint="[instructions]"),
    MenuCommand("name", "Name this session", cmd_name, argument_hint="<name>"),
    MenuCommand("copy", "Copy the last reply to the clipboard", cmd_copy),
    MenuCommand("export", "Export the session as HTML or JSONL", cmd_export, argument_hint="[path]"),
    MenuCommand("share", "Share the session as a private GitHub gist", cmd_share),
    MenuCommand("reload", "Reload context files, skills, templates and plugins", cmd_reload),
    MenuCommand("hotkeys", "Show active keyboard shortcuts", cmd_hotkeys),
    MenuCommand("changelog", "Show changelog entries", cmd_changelog),
    MenuCommand("quit", "Quit pi", cmd_quit),
    MenuCommand("exit", "Quit pi", cmd_quit),
]
