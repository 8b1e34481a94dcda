"""Key bindings of the interactive app: ``KEY_TABLE`` says what each keybinding action (keybindings.py) does and
when it is live; ``build`` binds the table, then the plugins' shortcuts, to the keys in force through one binder.

While a panel (a picker, /tree, /settings ...) is open, every key goes to it instead (panel.py).
"""

from __future__ import annotations

import inspect
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Literal

from pi_plugins.interactive import attachments, prompting, text_dialog
from pi_plugins.interactive.keybindings import Key, KeySyntaxError, to_prompt_toolkit
from pi_plugins.interactive.pickers import add_panel_keys
from prompt_toolkit.filters import Condition, Filter
from prompt_toolkit.input import ansi_escape_sequences
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.keys import Keys

if TYPE_CHECKING:
    from pi_plugins.interactive.host import AppHost
    from pi_plugins.interactive.shortcuts import PluginShortcut

DOUBLE_CTRL_C_SECONDS = 1.0
DOUBLE_ESCAPE_SECONDS = 0.8

# Shift+Enter as sent by terminals with the kitty keyboard protocol or xterm's modifyOtherKeys:
# read as Ctrl+J, which inserts a new line.
for _sequence in ("\x1b[13;2u", "\x1b[27;2;13~"):
    ansi_escape_sequences.ANSI_SEQUENCES.setdefault(_sequence, Keys.ControlJ)
# prompt_toolkit (3.0.53) reads xterm's Ctrl+Shift+Up as Ctrl+Shift+Down and the other way round.
ansi_escape_sequences.ANSI_SEQUENCES.update({"\x1b[1;6A": Keys.ControlShiftUp, "\x1b[1;6B": Keys.ControlShiftDown})

# When a row's keys are live: "editor" while no panel is open (a plugin's ui.editor text included); "app" the
# app's own keys, off while a plugin's text is edited; "app-no-menu" also off while the completion menu is open;
# "dialog" while a plugin's ui.editor is open.
Scope = Literal["editor", "app", "app-no-menu", "dialog"]
Handler = Callable[["AppHost", KeyPressEvent], None]
PASTE = "paste"  # a bracketed paste: not a keybinding action, so never rebound


@dataclass(frozen=True)
class KeyAction:
    action: str  # a keybinding action id (keybindings.ACTIONS), or PASTE
    scope: Scope
    run: Handler


def submit(ui: AppHost, event: KeyPressEvent) -> None:
    state = ui.buffer.complete_state
    if state is not None and state.completions:
        # An open menu highlights its first entry: Enter takes it ("/mo" runs /model).
        ui.buffer.apply_completion(state.current_completion or state.completions[0])
        if not ui.buffer.text.startswith("/"):
            return  # a file or path: keep editing; a command runs at once
    prompting.submit(ui)


def follow_up(ui: AppHost, event: KeyPressEvent) -> None:
    if ui.busy and ui.buffer.text.strip():
        prompting.submit(ui, follow_up=True)
    else:
        ui.buffer.insert_text("\n")


def new_line(ui: AppHost, event: KeyPressEvent) -> None:
    ui.buffer.insert_text("\n")


def interrupt(ui: AppHost, event: KeyPressEvent) -> None:
    """Escape: closes the menu, aborts the run or the shell command; twice on an empty editor, the
    ``doubleEscapeAction`` (/tree or /fork)."""
    if ui.buffer.complete_state is not None:
        ui.buffer.cancel_completion()
    elif ui.busy:
        ui.spawn(ui.abort())
    elif ui.shell_job is not None and ui.shell_job.running:
        ui.shell_job.cancel()
    elif not ui.buffer.text:
        now = time.monotonic()
        if now - ui.last_escape < DOUBLE_ESCAPE_SECONDS:
            ui.last_escape = 0.0
            action = ui.setting("doubleEscapeAction", "tree")
            if action in ("tree", "fork"):
                prompting.run_command_text(ui, "/" + action)
            return
        ui.last_escape = now


def tab(ui: AppHost, event: KeyPressEvent) -> None:
    state = ui.buffer.complete_state
    if state is None:
        ui.buffer.start_completion(insert_common_part=True)
        return
    completion = state.current_completion or (state.completions[0] if state.completions else None)
    if completion is None:
        ui.buffer.cancel_completion()
        return
    ui.buffer.apply_completion(completion)  # closes the menu
    if completion.text.endswith("/"):
        ui.buffer.start_completion()  # a directory: show what is inside


def cycle_thinking(ui: AppHost, event: KeyPressEvent) -> None:
    level = ui.control.cycle_thinking_level()
    ui.set_hint(f"Thinking level: {level}" if level else "This model has no thinking levels")


def cycle_model(ui: AppHost, event: KeyPressEvent, *, backward: bool = False) -> None:
    changed = ui.control.cycle_model(backward=backward)
    model = ui.session.model
    ui.set_hint(f"Model: {model.provider}/{model.id}" if changed else "Only one model to cycle through")


def external_editor(ui: AppHost, event: KeyPressEvent) -> None:
    command = ui.setting("externalEditor")
    if isinstance(command, str) and command.strip():
        os.environ["VISUAL"] = command  # prompt_toolkit reads $VISUAL first
    ui.buffer.open_in_editor()  # else $VISUAL / $EDITOR; prompt_toolkit suspends the app meanwhile


def clear(ui: AppHost, event: KeyPressEvent) -> None:
    """Ctrl+C: clears the editor; on an empty one, twice quickly quits."""
    now = time.monotonic()
    if ui.buffer.text or ui.attachments:
        ui.clear_editor()
        ui.last_ctrl_c = now
        return
    if now - ui.last_ctrl_c < DOUBLE_CTRL_C_SECONDS:
        ui.exit(0)
        return
    ui.last_ctrl_c = now
    ui.set_hint("Press Ctrl+C again to exit")


def exit_or_delete(ui: AppHost, event: KeyPressEvent) -> None:
    if not ui.buffer.text:
        ui.exit(0)
    else:
        ui.buffer.delete()


def suspend(ui: AppHost, event: KeyPressEvent) -> None:
    event.app.suspend_to_background()


def undo(ui: AppHost, event: KeyPressEvent) -> None:
    ui.buffer.undo()


def toggle_thinking(ui: AppHost, event: KeyPressEvent) -> None:
    ui.view.show_thinking = not ui.view.show_thinking
    ui.set_hint("Thinking " + ("shown" if ui.view.show_thinking else "hidden"))


def toggle_tools(ui: AppHost, event: KeyPressEvent) -> None:
    ui.toggle_tool_output()


def dequeue(ui: AppHost, event: KeyPressEvent) -> None:
    prompting.dequeue(ui)


def paste_image(ui: AppHost, event: KeyPressEvent) -> None:
    ui.spawn(attachments.paste_from_clipboard(ui))


def paste(ui: AppHost, event: KeyPressEvent) -> None:
    attachments.paste_text(ui, event.data)


def runs(command: str) -> Handler:
    """A key that runs a slash command as if typed (``/tree``, ``/model``)."""
    def run(ui: AppHost, event: KeyPressEvent) -> None:
        prompting.run_command_text(ui, command)

    return run


def dialog_submit(ui: AppHost, event: KeyPressEvent) -> None:
    text_dialog.finish(ui, ui.buffer.text)


def dialog_cancel(ui: AppHost, event: KeyPressEvent) -> None:
    text_dialog.finish(ui, None)


def delete(ui: AppHost, event: KeyPressEvent) -> None:
    ui.buffer.delete()


def dialog_paste(ui: AppHost, event: KeyPressEvent) -> None:
    ui.buffer.insert_text(event.data.replace("\r\n", "\n").replace("\r", "\n"))


# Where rows share a key and a moment, the later one wins (prompt_toolkit runs the last binding that matches).
KEY_TABLE: tuple[KeyAction, ...] = (
    KeyAction("tui.input.submit", "editor", submit),
    KeyAction("app.message.followUp", "app", follow_up),
    KeyAction("tui.input.newLine", "editor", new_line),
    KeyAction("app.interrupt", "editor", interrupt),
    KeyAction("tui.input.tab", "editor", tab),
    KeyAction("app.thinking.cycle", "app-no-menu", cycle_thinking),
    KeyAction("app.model.cycleForward", "app", cycle_model),
    KeyAction("app.model.cycleBackward", "app", partial(cycle_model, backward=True)),
    KeyAction("app.model.select", "app", runs("/model")),
    KeyAction("app.editor.external", "editor", external_editor),
    KeyAction("app.clear", "editor", clear),
    KeyAction("app.exit", "editor", exit_or_delete),
    KeyAction("app.suspend", "editor", suspend),
    KeyAction("tui.editor.undo", "editor", undo),
    KeyAction("app.thinking.toggle", "app", toggle_thinking),
    KeyAction("app.tools.expand", "app", toggle_tools),
    KeyAction("app.message.dequeue", "app", dequeue),
    KeyAction("app.message.copy", "app", runs("/copy")),
    KeyAction("app.clipboard.pasteImage", "app", paste_image),
    KeyAction("app.session.new", "app", runs("/new")),
    KeyAction("app.session.tree", "app", runs("/tree")),
    KeyAction("app.session.fork", "app", runs("/fork")),
    KeyAction("app.session.resume", "app", runs("/resume")),
    KeyAction(PASTE, "editor", paste),
    # A plugin's ui.editor: Enter submits its text, Escape or Ctrl+C cancels, Ctrl+D only deletes.
    KeyAction("tui.input.submit", "dialog", dialog_submit),
    KeyAction("tui.select.cancel", "dialog", dialog_cancel),
    KeyAction("app.exit", "dialog", delete),
    KeyAction(PASTE, "dialog", dialog_paste),
)


def build(ui: AppHost) -> KeyBindings:
    bindings = KeyBindings()
    panel_open = Condition(lambda: ui.panel is not None)
    dialog_open = Condition(lambda: ui.text_dialog is not None)
    completing = Condition(lambda: ui.buffer.complete_state is not None)
    scopes: dict[Scope, Filter] = {"editor": ~panel_open, "app": ~panel_open & ~dialog_open,
                                   "app-no-menu": ~panel_open & ~dialog_open & ~completing, "dialog": dialog_open}
    add_panel_keys(bindings, lambda: ui.panel, ui.panel_done, ui.keybindings, active=panel_open)
    for row in KEY_TABLE:
        keys = [Keys.BracketedPaste] if row.action == PASTE else ui.keybindings.keys(row.action)
        bind(bindings, keys, scopes[row.scope], partial(row.run, ui), f"keybindings: {row.action}", ui.startup_notes)
    for shortcut in ui.shortcuts:  # last: a plugin's key wins over a built-in one
        bind(bindings, [shortcut.key], scopes["app"], shortcut_runner(ui, shortcut),
             f"Extension shortcut '{shortcut.text}' from {shortcut.plugin}", ui.startup_notes)
    return bindings


def bind(bindings: KeyBindings, keys: Sequence[Key | Keys], when: Filter, handler: Callable[[KeyPressEvent], None],
         where: str, notes: list[str]) -> None:
    """Bind ``handler`` to each of ``keys`` while ``when`` holds; a key a terminal cannot send is noted."""
    for key in keys:
        try:
            sequence = (key,) if isinstance(key, Keys) else to_prompt_toolkit(key)
        except KeySyntaxError as err:
            notes.append(f"{where}: {err}")
            continue
        bindings.add(*sequence, filter=when)(handler)


def shortcut_runner(ui: AppHost, shortcut: PluginShortcut) -> Callable[[KeyPressEvent], None]:
    """A plugin's shortcut: its handler gets a command context; a failure is that plugin's extension error."""
    def run(event: KeyPressEvent) -> None:
        async def call() -> None:
            ctx = ui.session.ext.for_plugin(shortcut.plugin).as_command_context()
            try:
                outcome = shortcut.handler(ctx)
                if inspect.isawaitable(outcome):
                    await outcome
            except Exception as err:  # noqa: BLE001 - plugin code: shown as an extension error
                ui.notify(f'Extension "{shortcut.plugin}" error (shortcut {shortcut.text}): {err}', "red")
            finally:
                ui.entries.check()

        ui.spawn(call())

    return run
