"""The built-in slash commands. Each handler gets the UI (see ``CommandUI``) and the argument text.

Session operations the runtime does not offer yet (``new_session``, ``switch_session``, ``compact``,
``reload``...) are looked up with ``getattr``; some have a fallback through the session manager, the
others say plainly that they are not available.
"""

from __future__ import annotations

import inspect
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

from plugins.interactive.commands import CommandUI, SlashCommand
from plugins.interactive.pickers import PickItem, session_items

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
    ("Tab", "complete a path"),
    ("@", "fuzzy-find a file to mention"),
    ("!cmd / !!cmd", "run a shell command and send its output / without sending it"),
    ("Up / Down", "browse the prompt history"),
]


async def _maybe(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


def _unavailable(ui: CommandUI, what: str) -> None:
    ui.notify(f"{what} is not available in this build (the session has no such operation)", "yellow")


def _store(ui: CommandUI) -> Any:
    return getattr(ui.session, "store", None)


def _reload_messages(ui: CommandUI, *, restore_settings: bool = False) -> None:
    """After the session manager moved (resume, tree, fork): take its branch as the transcript.

    On resume the session's own model and thinking level come back too (set on the state directly,
    so resuming does not record a model change).
    """
    store = _store(ui)
    context = store.build_session_context()
    state = ui.session.agent.state
    state.messages = context.typed_messages()
    registry = getattr(ui.session, "models", None)
    if restore_settings and context.model and registry is not None and hasattr(registry, "find"):
        model = registry.find(context.model.get("provider", ""), context.model.get("modelId", ""))
        if model is not None:
            state.model = model
    if restore_settings and context.thinking_level and state.messages:
        state.thinking_level = context.thinking_level
    replay = getattr(ui, "replay", None)
    if replay is not None:
        replay()


async def cmd_model(ui: CommandUI, args: str) -> None:
    registry = getattr(ui.session, "models", None)
    models = registry.available_models() if registry is not None else [ui.session.model]
    if args:
        from pi_core.llm.model_resolution import match_model

        chosen = match_model(args, models)
        if chosen is None:
            ui.notify(f'No model matches "{args}"', "red")
            return
    else:
        current = ui.session.model
        items = [PickItem(f"{m.provider}/{m.id}", m, hint=("✓ " if m is current or
                                                          (m.id == current.id and m.provider == current.provider)
                                                          else "") + (m.name or ""))
                 for m in models]
        chosen = await ui.pick("Select model", items)
        if chosen is None:
            return
    ui.session.set_model(chosen)
    from pi_core.llm.thinking import clamp_thinking_level

    level = clamp_thinking_level(chosen, ui.session.agent.state.thinking_level)
    if level != ui.session.agent.state.thinking_level:
        ui.session.set_thinking_level(level)
    ui.notify(f"Model: {chosen.provider}/{chosen.id}", "green")


async def cmd_thinking(ui: CommandUI, args: str) -> None:
    from pi_core.llm.thinking import supported_thinking_levels

    levels = supported_thinking_levels(ui.session.model)
    level = args or await ui.pick("Thinking level", [PickItem(lvl, lvl) for lvl in levels])
    if level is None:
        return
    ui.session.set_thinking_level(level)
    ui.notify(f"Thinking level: {level}", "green")


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
    if hasattr(ui.session, "new_session"):
        await _maybe(ui.session.new_session())
    elif _store(ui) is not None and hasattr(_store(ui), "new_session"):
        _store(ui).new_session()
        ui.session.agent.reset()
    else:
        _unavailable(ui, "/new")
        return
    ui.notify("New session started", "green")


async def cmd_resume(ui: CommandUI, args: str) -> None:
    store = _store(ui)
    if store is None or store.session_dir is None:
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
    if hasattr(ui.session, "switch_session"):
        await _maybe(ui.session.switch_session(path))
    else:
        store.set_session_file(path)
        _reload_messages(ui, restore_settings=True)
    ui.notify(f"Resumed {path}", "green")


def cmd_session(ui: CommandUI, args: str) -> None:
    from rich.table import Table

    from plugins.interactive.footer import session_name, session_totals

    totals = session_totals(ui.session.messages)
    store = _store(ui)
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold")
    table.add_column()
    file = getattr(store, "session_file", None)
    table.add_row("File", str(file) if file else "(not saved)")
    table.add_row("ID", str(getattr(store, "session_id", "") or "-"))
    if session_name(ui.session):
        table.add_row("Name", str(session_name(ui.session)))
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
    store = _store(ui)
    if store is None or not hasattr(store, "get_tree"):
        _unavailable(ui, "/tree")
        return
    items = _tree_items(store)
    if not items:
        ui.notify("The session is empty", "yellow")
        return
    entry_id = await ui.pick("Session tree (enter: continue from that entry)", items)
    if entry_id is None:
        return
    if hasattr(ui.session, "navigate_tree"):
        await _maybe(ui.session.navigate_tree(entry_id))
    else:
        store.branch(entry_id)
        _reload_messages(ui)
    ui.notify("Moved to the selected entry; the next message starts a new branch", "green")


async def cmd_fork(ui: CommandUI, args: str) -> None:
    store = _store(ui)
    if store is None or not hasattr(store, "fork"):
        _unavailable(ui, "/fork")
        return
    users = [e for e in store.get_branch() if e.get("type") == "message" and e["message"].get("role") == "user"]
    if not users:
        ui.notify("No user message to fork from", "yellow")
        return
    items = []
    for entry in reversed(users):
        content = entry["message"].get("content")
        text = content if isinstance(content, str) else " ".join(b.get("text", "") for b in content if b.get("type") == "text")
        items.append(PickItem(text.replace("\n", " ")[:100], entry["id"]))
    entry_id = await ui.pick("Fork from message", items)
    if entry_id is None:
        return
    if hasattr(ui.session, "fork"):
        result = await _maybe(ui.session.fork(entry_id))
    else:
        result = store.fork(entry_id)
        _reload_messages(ui)
    text = getattr(result, "selected_text", None)
    if text:
        ui.set_editor_text(text)
    ui.notify("Forked to a new session", "green")


async def cmd_compact(ui: CommandUI, args: str) -> None:
    compact = getattr(ui.session, "compact", None)
    if compact is None:
        _unavailable(ui, "/compact")
        return
    ui.notify("Compacting the conversation…")
    result = await _maybe(compact(args or None))
    before = getattr(result, "tokens_before", None)
    ui.notify(f"Compacted ({before:,} tokens before)" if before else "Compacted", "green")
    if getattr(result, "summary", None):
        from plugins.interactive.view import render_notice

        ui.show(render_notice("Summary: " + result.summary, "dim italic"))


def cmd_name(ui: CommandUI, args: str) -> None:
    if not args:
        ui.notify("Usage: /name <session name>", "yellow")
        return
    if hasattr(ui.session, "set_session_name"):
        ui.session.set_session_name(args)
    elif _store(ui) is not None:
        _store(ui).append_session_info(args)
    else:
        _unavailable(ui, "/name")
        return
    ui.notify(f"Session name: {args}", "green")


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
    message = ui.session.last_assistant()
    text = message.text() if message is not None else ""
    if not text:
        ui.notify("No assistant message to copy", "yellow")
        return
    how = copy_to_clipboard(text)
    ui.notify(f"Copied the last reply to the clipboard ({how})", "green")


def cmd_export(ui: CommandUI, args: str) -> None:
    store = _store(ui)
    file = getattr(store, "session_file", None)
    if file is None or not Path(file).exists():
        ui.notify("Nothing to export: the session is not saved yet", "yellow")
        return
    try:
        from pi_core.sessions.export_html import export_html
    except ImportError:
        _unavailable(ui, "/export")
        return
    out = Path(args).expanduser() if args else ui.session.config.cwd / f"pi-session-{Path(file).stem}.html"
    ui.notify(f"Exported to: {export_html(Path(file), out)}", "green")


async def cmd_reload(ui: CommandUI, args: str) -> None:
    reload = getattr(ui.session, "reload", None)
    if reload is None:
        _unavailable(ui, "/reload")
        return
    await _maybe(reload())
    refresh = getattr(ui, "refresh_commands", None)
    if refresh is not None:
        refresh()
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


BUILTIN_COMMANDS: list[SlashCommand] = [
    SlashCommand("model", "Select a model (picker, or /model <pattern>)", cmd_model, argument_hint="[pattern]"),
    SlashCommand("thinking", "Set the thinking level", cmd_thinking, argument_hint="[level]"),
    SlashCommand("tools", "Turn tools on or off", cmd_tools),
    SlashCommand("new", "Start a new session", cmd_new),
    SlashCommand("resume", "Resume another session of this project", cmd_resume),
    SlashCommand("session", "Show session file, messages, tokens and cost", cmd_session),
    SlashCommand("tree", "Browse the session tree and continue from any entry", cmd_tree),
    SlashCommand("fork", "Start a new session from an earlier user message", cmd_fork),
    SlashCommand("compact", "Summarize the conversation to free context", cmd_compact,
                 argument_hint="[instructions]"),
    SlashCommand("name", "Name this session", cmd_name, argument_hint="<name>"),
    SlashCommand("copy", "Copy the last reply to the clipboard", cmd_copy),
    SlashCommand("export", "Export the session to HTML", cmd_export, argument_hint="[file]"),
    SlashCommand("reload", "Reload context files, skills, templates and plugins", cmd_reload),
    SlashCommand("hotkeys", "Show keyboard shortcuts", cmd_hotkeys),
    SlashCommand("quit", "Quit pi", cmd_quit),
    SlashCommand("exit", "Quit pi", cmd_quit),
]
