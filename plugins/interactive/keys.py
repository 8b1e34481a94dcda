"""Key bindings of the interactive app: each keybinding action (keybindings.py) bound to its keys in force.

While a panel (a picker, /tree, /settings ...) is open, every key goes to it instead (panel.py).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pi_plugins.interactive import shortcuts
from pi_plugins.interactive.keybindings import KeySyntaxError, to_prompt_toolkit
from pi_plugins.interactive.pickers import add_panel_keys
from prompt_toolkit.filters import Condition, Filter
from prompt_toolkit.input import ansi_escape_sequences
from prompt_toolkit.key_binding import KeyBindings
from prompt_toolkit.keys import Keys

if TYPE_CHECKING:
    from pi_plugins.interactive.app import InteractiveApp

DOUBLE_CTRL_C_SECONDS = 1.0
DOUBLE_ESCAPE_SECONDS = 0.8

# Shift+Enter as sent by terminals with the kitty keyboard protocol or xterm's modifyOtherKeys:
# read as Ctrl+J, which inserts a new line.
for _sequence in ("\x1b[13;2u", "\x1b[27;2;13~"):
    ansi_escape_sequences.ANSI_SEQUENCES.setdefault(_sequence, Keys.ControlJ)


def build(ui: InteractiveApp) -> KeyBindings:
    bindings = KeyBindings()
    panel_open = Condition(lambda: ui.panel is not None)
    editing = ~panel_open
    dialog_open = Condition(lambda: ui.text_dialog is not None)
    app_keys = editing & ~dialog_open  # keys of the app, not of the editor: off while a plugin's text is edited
    completing = Condition(lambda: ui.buffer.complete_state is not None)
    add_panel_keys(bindings, lambda: ui.panel, ui.panel_done, ui.keybindings, active=panel_open)

    def on(action: str, when: Filter = editing) -> Callable[[Callable[[Any], None]], Callable[[Any], None]]:
        def register(handler: Callable[[Any], None]) -> Callable[[Any], None]:
            for key in ui.keybindings.keys(action):
                try:
                    sequence = to_prompt_toolkit(key)
                except KeySyntaxError as err:
                    ui.startup_notes.append(f"keybindings: {action}: {err}")
                    continue
                bindings.add(*sequence, filter=when)(handler)
            return handler
        return register

    @on("tui.input.submit")
    def _enter(event: Any) -> None:
        state = ui.buffer.complete_state
        if state is not None and state.completions:
            # An open menu highlights its first entry: Enter takes it ("/mo" runs /model).
            ui.buffer.apply_completion(state.current_completion or state.completions[0])
            if not ui.buffer.text.startswith("/"):
                return  # a file or path: keep editing; a command runs at once
        ui.submit()

    @on("app.message.followUp", app_keys)
    def _follow_up(event: Any) -> None:
        if ui.busy and ui.buffer.text.strip():
            ui.submit(follow_up=True)
        else:
            ui.buffer.insert_text("\n")

    @on("tui.input.newLine")
    def _newline(event: Any) -> None:
        ui.buffer.insert_text("\n")

    @on("app.interrupt")
    def _escape(event: Any) -> None:
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
                    ui.run_command_text("/" + action)
                return
            ui.last_escape = now

    @on("tui.input.tab")
    def _tab(event: Any) -> None:
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

    @on("app.thinking.cycle", app_keys & ~completing)
    def _cycle_thinking(event: Any) -> None:
        level = ui.control.cycle_thinking_level()
        ui.set_hint(f"Thinking level: {level}" if level else "This model has no thinking levels")

    @on("app.model.cycleForward", app_keys)
    def _cycle_model(event: Any) -> None:
        ui.cycle_model(backward=False)

    @on("app.model.cycleBackward", app_keys)
    def _cycle_model_back(event: Any) -> None:
        ui.cycle_model(backward=True)

    @on("app.model.select", app_keys)
    def _model_picker(event: Any) -> None:
        ui.run_command_text("/model")

    @on("app.editor.external")
    def _external_editor(event: Any) -> None:
        import os

        command = ui.setting("externalEditor")
        if isinstance(command, str) and command.strip():
            os.environ["VISUAL"] = command  # prompt_toolkit reads $VISUAL first
        ui.buffer.open_in_editor()  # else $VISUAL / $EDITOR; prompt_toolkit suspends the app meanwhile

    @on("app.clear")
    def _ctrl_c(event: Any) -> None:
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

    @on("app.exit")
    def _ctrl_d(event: Any) -> None:
        if not ui.buffer.text:
            ui.exit(0)
        else:
            ui.buffer.delete()

    @on("app.suspend")
    def _suspend(event: Any) -> None:
        event.app.suspend_to_background()

    @on("tui.editor.undo")
    def _undo(event: Any) -> None:
        ui.buffer.undo()

    @on("app.thinking.toggle", app_keys)
    def _toggle_thinking(event: Any) -> None:
        ui.view.show_thinking = not ui.view.show_thinking
        ui.set_hint("Thinking " + ("shown" if ui.view.show_thinking else "hidden"))

    @on("app.tools.expand", app_keys)
    def _toggle_tools(event: Any) -> None:
        ui.toggle_tool_output()

    @on("app.message.dequeue", app_keys)
    def _dequeue(event: Any) -> None:
        ui.dequeue()

    @on("app.message.copy", app_keys)
    def _copy(event: Any) -> None:
        ui.run_command_text("/copy")

    @on("app.clipboard.pasteImage", app_keys)
    def _paste_image(event: Any) -> None:
        ui.paste_image()

    def runs(command: str) -> Callable[[Any], None]:
        def handler(event: Any) -> None:
            ui.run_command_text(command)
        return handler

    for action, command in (("app.session.new", "/new"), ("app.session.tree", "/tree"),
                            ("app.session.fork", "/fork"), ("app.session.resume", "/resume")):
        on(action, app_keys)(runs(command))

    @bindings.add(Keys.BracketedPaste, filter=editing)
    def _paste(event: Any) -> None:
        ui.paste_text(event.data)

    shortcuts.bind(bindings, ui, ui.shortcuts, app_keys)  # last: a plugin's key wins over a built-in one
    _dialog_keys(ui, on, dialog_open, bindings)
    return bindings


def _dialog_keys(ui: InteractiveApp, on: Any, dialog_open: Filter, bindings: KeyBindings) -> None:
    """A plugin's ``ui.editor``: Enter submits its text, Escape or Ctrl+C cancels (bound after the rest: they win)."""
    from pi_plugins.interactive import text_dialog

    @on("tui.input.submit", dialog_open)
    def _submit(event: Any) -> None:
        text_dialog.finish(ui, ui.buffer.text)

    @on("tui.select.cancel", dialog_open)
    def _cancel(event: Any) -> None:
        text_dialog.finish(ui, None)

    @on("app.exit", dialog_open)
    def _delete(event: Any) -> None:
        ui.buffer.delete()

    @bindings.add(Keys.BracketedPaste, filter=dialog_open)
    def _paste(event: Any) -> None:
        ui.buffer.insert_text(event.data.replace("\r\n", "\n").replace("\r", "\n"))
