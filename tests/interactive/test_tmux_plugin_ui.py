"""tmux: what a plugin does to the interactive UI through ``ctx.ui`` (issue 15's contract, the parts on main):
widgets above and below the editor, a coloured status, the working message and its visibility, the label of
hidden thinking, the terminal title, Ctrl+O's state, and pasting into the editor."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from tmux_kit import pi_rig

from pi_core.testing.fake_server import Reply

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

PLUGIN = '''
from pi_core import hookimpl
from pi_core import SlashCommand


def decorate(args, ctx):
    ui = ctx.ui
    ui.set_widget("todo", ["\\x1b[32mTODO: write tests\\x1b[0m", "TODO: ship"], "aboveEditor")
    ui.set_widget("hint", ["below the editor"], "belowEditor")
    ui.set_status("mode", "\\x1b[31mPLAN MODE\\x1b[0m")
    ui.set_working_message("Crunching numbers")
    ui.set_hidden_thinking_label("(the model pondered; ctrl+t)")
    ui.set_title("pi - decorated")
    ui.set_tools_expanded(True)
    ui.paste_to_editor("pasted by the plugin")


def quiet(args, ctx):
    ctx.ui.set_widget("todo", None)
    ctx.ui.set_working_visible(False)
    ctx.ui.notify("expanded=" + str(ctx.ui.get_tools_expanded()))


@hookimpl
def pi_commands():
    return [SlashCommand("decorate", "Decorate the UI", decorate), SlashCommand("quiet", "Undecorate", quiet)]
'''


def test_plugin_ui_calls_show_in_the_terminal(tmp_path: Path) -> None:
    with pi_rig(tmp_path, "plugin-ui") as rig:
        tmux = rig.tmux
        plugin = tmp_path / "decorate.py"
        plugin.write_text(PLUGIN)
        (rig.home / "settings.json").write_text('{"hideThinkingBlock": true}')
        rig.start("-e", str(plugin))
        tmux.wait_for("(fake) fake-model")
        rig.command("/decorate")
        screen = tmux.wait_for("pasted by the plugin", visible=True)
        lines = screen.splitlines()
        editor_row = next(i for i, line in enumerate(lines) if "pasted by the plugin" in line)
        above = next(i for i, line in enumerate(lines) if "TODO: write tests" in line)
        below = next(i for i, line in enumerate(lines) if "below the editor" in line)
        assert above < editor_row < below and "TODO: ship" in lines[above + 1]
        assert "PLAN MODE" in screen and "\x1b" not in screen  # ANSI drawn as colour, not as text
        coloured = tmux.screen(colours=True)
        assert "\x1b[32mTODO: write tests" in coloured
        assert tmux.run("display-message", "-p", "-t", "pi", "#{pane_title}").strip() == "pi - decorated"
        tmux.keys("C-c")

        # The working row says the plugin's words; hidden thinking shows the plugin's label; outputs are open.
        gate = rig.cwd / "go"
        command = "while [ ! -f go ]; do sleep 0.05; done; seq 1 30"
        rig.server.add(Reply(thinking="deep thoughts", tool_calls=[("bash", {"command": command})]),
                       Reply(text="all done"))
        rig.command("count")
        tmux.wait_for("Crunching numbers", visible=True)
        gate.write_text("")
        screen = tmux.wait_for("all done")
        assert "(the model pondered; ctrl+t)" in screen and "deep thoughts" not in screen
        shown = [line.strip() for line in screen.splitlines()]
        assert "1" in shown and "2" in shown and "earlier lines" not in screen  # outputs open: all 30 lines
        rig.command("/quiet")
        tmux.wait_for("expanded=True")
        assert "TODO: write tests" not in tmux.visible()
        rig.server.add(Reply(tool_calls=[("bash", {"command": "while [ ! -f go2 ]; do sleep 0.05; done"})]),
                       Reply(text="second done"))
        rig.command("again")
        tmux.wait_for("$ while [ ! -f go2 ]", visible=True)
        assert "Crunching numbers" not in tmux.visible()  # set_working_visible(False)
        (rig.cwd / "go2").write_text("")
        tmux.wait_for("second done")
        tmux.keys("C-d")
        tmux.wait_for("EXITED=0")
