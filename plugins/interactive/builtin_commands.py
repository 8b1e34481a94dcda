"""The built-in slash commands. Each handler gets the UI (see ``CommandUI``) and the argument text."""

from __future__ import annotations

import os
import shutil
import subprocess
from typing import Any

from pi_plugins.interactive.commands import CommandUI, MenuCommand
from pi_plugins.interactive.pickers import PickItem, session_items

HOTKEYS: list[tuple[str, str]] = [
    ("Enter", "send (while working: queue a steering message)"),
    ("Alt+Enter", "new line (while working: queue a follow-up)"),
    ("Shift+Enter / Ctrl+J", "new line"),
    ("Escape", "abort the run; queued messages return to the editor"),
    ("Escape twice", "browse the session tree (editor empty, agent idle)"),
    ("Ctrl+L", "select a model"),
    ("Ctrl+G", "edit the message in $VISUAL / $EDITOR"),
    ("Ctrl+C", "clear the editor; twice quickly to quit"),
    ("Ctrl+D", "quit when the editor is empty"),
    ("Ctrl+T", "show or hide thinking"),
    ("Ctrl+O", "expand or collapse tool output"),
    ("Shift+Tab", "cycle the thinking level"),
    ("Ctrl+P", "cycle models (the --models scope, else all available)"),
    ("Tab", "complete a path"),
    ("@", "fuzzy-find a file to mention"),
    ("!cmd / !!cmd", "run a shell command and send its output / without sending it"),
    ("Up / Down", "browse the prompt history"),
]




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


async def cmd_resume(ui: CommandUI, args: str) -> None:
    store = ui.session.store
    if store.session_dir is None:
        ui.notify("Sessions are not saved in this run (--no-session)", "yellow")
        return
    from pi_core.sessions.manager import SessionManager

    infos = [i for i in SessionManager.list(store.cwd, store.session_dir) if i.path != store.session_file]
    if not infos:
        ui.notify("No other sessions in this project", "yellow")
        return
    path = await ui.pick("Resume session", session_items(infos))
    if path is None:
        return
    await ui.control.switch_session(str(path))
    ui.replay()
    ui.notify(f"Resumed {path}", "green")


def cmd_session(ui: CommandUI, args: str) -> None:
    from rich.table import Table

    from pi_core.control.stats import session_totals

    totals = session_totals(ui.session.messages)
    store = ui.session.store
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold")
    table.add_column()
    table.add_row("File", str(store.session_file) if store.session_file else "(not saved)")
    table.add_row("ID", str(store.session_id or "-"))
    if store.session_name:
        table.add_row("Name", store.session_name)
    table.add_row("Messages", f"{totals.user_messages} user, {totals.assistant_messages} assistant, "
                              f"{totals.tool_calls} tool calls, {totals.tool_results} tool results")
    table.add_row("Tokens", f"{totals.input:,} in, {totals.output:,} out, {totals.cache_read:,} cache read, "
                            f"{totals.cache_write:,} cache write")
    table.add_row("Cost", f"${totals.cost:.4f}")
    ui.show(table)


def _tree_items(store: Any) -> list[PickItem]:
    items: list[PickItem] = []
    leaf = store.leaf_id

    def walk(node: Any, depth: int) -> None:
        entry = node.entry
        kind = entry.get("type")
        if kind == "message":
            message = entry.get("message", {})
            role = message.get("role", "?")
            content = message.get("content")
            text = content if isinstance(content, str) else " ".join(
                b.get("text", "") for b in content or [] if isinstance(b, dict) and b.get("type") == "text")
            if role == "toolResult":
                text = f"[{message.get('toolName', 'tool')} result]"
            elif role == "assistant" and not text.strip():
                text = "[" + ", ".join(b.get("name", "?") for b in content or [] if b.get("type") == "toolCall") + "]"
            label = f"{role}: {text.strip()}".replace("\n", " ")
        else:
            label = f"[{kind}]"
        marker = "● " if entry.get("id") == leaf else ""
        label = "  " * depth + marker + label[:100]
        items.append(PickItem(label, entry.get("id"), hint=node.label or ""))
        for child in node.children:
            walk(child, depth + (1 if len(node.children) > 1 else 0))

    for root in store.get_tree():
        walk(root, 0)
    return items


async def cmd_tree(ui: CommandUI, args: str) -> None:
    store = ui.session.store
    items = _tree_items(store)
    if not items:
        ui.notify("The session is empty", "yellow")
        return
    entry_id = await ui.pick("Session tree (enter: continue from that entry)", items)
    if entry_id is None:
        return
    store.branch(entry_id)
    ui.session.agent.state.messages = store.build_session_context().typed_messages()
    ui.replay()
    ui.notify("Moved to the selected entry; the next message starts a new branch", "green")


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


def cmd_export(ui: CommandUI, args: str) -> None:
    ui.notify(f"Exported to: {ui.control.export_html(args or None)}", "green")


async def cmd_reload(ui: CommandUI, args: str) -> None:
    await ui.session.reload()
    ui.refresh_commands()
    ui.notify("Reloaded context files, skills, prompt templates and plugins", "green")


def cmd_hotkeys(ui: CommandUI, args: str) -> None:
    from rich.table import Table

    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold cyan")
    table.add_column()
    for key, what in HOTKEYS:
        table.add_row(key, what)
    ui.show(table)


def cmd_quit(ui: CommandUI, args: str) -> None:
    ui.exit()


BUILTIN_COMMANDS: list[MenuCommand] = [
    MenuCommand("model", "Select a model (picker, or /model <pattern>)", cmd_model, argument_hint="[pattern]"),
    MenuCommand("thinking", "Set the thinking level", cmd_thinking, argument_hint="[level]"),
    MenuCommand("tools", "Turn tools on or off", cmd_tools),
    MenuCommand("new", "Start a new session", cmd_new),
    MenuCommand("resume", "Resume another session of this project", cmd_resume),
    MenuCommand("session", "Show session file, messages, tokens and cost", cmd_session),
    MenuCommand("tree", "Browse the session tree and continue from any entry", cmd_tree),
    MenuCommand("fork", "Start a new session from an earlier user message", cmd_fork),
    MenuCommand("compact", "Summarize the conversation to free context", cmd_compact,
                 argument_hint="[instructions]"),
    MenuCommand("name", "Name this session", cmd_name, argument_hint="<name>"),
    MenuCommand("copy", "Copy the last reply to the clipboard", cmd_copy),
    MenuCommand("export", "Export the session to HTML", cmd_export, argument_hint="[file]"),
    MenuCommand("reload", "Reload context files, skills, templates and plugins", cmd_reload),
    MenuCommand("hotkeys", "Show keyboard shortcuts", cmd_hotkeys),
    MenuCommand("quit", "Quit pi", cmd_quit),
    MenuCommand("exit", "Quit pi", cmd_quit),
]
