"""Key bindings of the interactive app (see /hotkeys for the list users read)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from pi_plugins.interactive.pickers import add_picker_keys
from prompt_toolkit.filters import Condition
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
    picking = Condition(lambda: ui.picker is not None)
    editing = ~picking
    completing = Condition(lambda: ui.buffer.complete_state is not None)

    add_picker_keys(bindings, lambda: ui.picker, ui.picker_done, lambda: ui.picker_done(None), active=picking)

    @bindings.add("enter", filter=editing)
    def _enter(event: Any) -> None:
        state = ui.buffer.complete_state
        if state is not None and state.completions:
            # An open menu highlights its first entry: Enter takes it ("/mo" runs /model).
            ui.buffer.apply_completion(state.current_completion or state.completions[0])
            if not ui.buffer.text.startswith("/"):
                return  # a file or path: keep editing; a command runs at once
        ui.submit()

    @bindings.add("escape", "enter", filter=editing)
    def _alt_enter(event: Any) -> None:
        if ui.busy and ui.buffer.text.strip():
            ui.submit(follow_up=True)
        else:
            ui.buffer.insert_text("\n")

    @bindings.add("c-j", filter=editing)
    def _newline(event: Any) -> None:
        ui.buffer.insert_text("\n")

    @bindings.add("escape", filter=editing)
    def _escape(event: Any) -> None:
        if ui.buffer.complete_state is not None:
            ui.buffer.cancel_completion()
        elif ui.busy:
            ui._spawn(ui.abort())
        elif ui.shell_job is not None and ui.shell_job.running:
            ui.shell_job.cancel()
        elif not ui.buffer.text:
            now = time.monotonic()
            if now - ui.last_escape < DOUBLE_ESCAPE_SECONDS:
                ui.run_command_text("/tree")  # Escape twice on an empty editor: browse the session tree
            ui.last_escape = now

    @bindings.add("c-l", filter=editing)
    def _model_picker(event: Any) -> None:
        ui.run_command_text("/model")

    @bindings.add("c-g", filter=editing)
    def _external_editor(event: Any) -> None:
        ui.buffer.open_in_editor()  # $VISUAL / $EDITOR; prompt_toolkit suspends the app meanwhile

    @bindings.add("tab", filter=editing)
    def _tab(event: Any) -> None:
        if ui.buffer.complete_state is not None:
            ui.buffer.complete_next()
        else:
            ui.buffer.start_completion(insert_common_part=True)

    @bindings.add("s-tab", filter=editing & ~completing)
    def _cycle_thinking(event: Any) -> None:
        level = ui.control.cycle_thinking_level()
        ui.hint = f"Thinking level: {level}" if level else "This model has no thinking levels"
        ui.invalidate()

    @bindings.add("c-p", filter=editing)
    def _cycle_model(event: Any) -> None:
        changed = ui.control.cycle_model()
        model = ui.session.model
        ui.hint = f"Model: {model.provider}/{model.id}" if changed else "Only one model to cycle through"
        ui.invalidate()

    @bindings.add("c-c", filter=editing)
    def _ctrl_c(event: Any) -> None:
        now = time.monotonic()
        if ui.buffer.text:
            ui.buffer.reset()
            ui.last_ctrl_c = now
            return
        if now - ui.last_ctrl_c < DOUBLE_CTRL_C_SECONDS:
            ui.exit(0)
            return
        ui.last_ctrl_c = now
        ui.hint = "Press Ctrl+C again to exit"
        ui.invalidate()

    @bindings.add("c-d", filter=editing)
    def _ctrl_d(event: Any) -> None:
        if not ui.buffer.text:
            ui.exit(0)
        else:
            ui.buffer.delete()

    @bindings.add("c-t")
    def _toggle_thinking(event: Any) -> None:
        ui.view.show_thinking = not ui.view.show_thinking
        ui.hint = "Thinking " + ("shown" if ui.view.show_thinking else "hidden")
        ui.invalidate()

    @bindings.add("c-o")
    def _toggle_tools(event: Any) -> None:
        ui.view.expanded = not ui.view.expanded
        ui.hint = "Tool output " + ("expanded" if ui.view.expanded else "collapsed")
        if ui.view.expanded and ui.view.last_tool is not None and not ui.busy:
            from pi_plugins.interactive.view import render_tool

            block = ui.view.last_tool
            ui.show(render_tool(block, ui.view.renderer_for(block.name), True))
        ui.invalidate()

    return bindings
