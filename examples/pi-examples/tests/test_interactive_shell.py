"""interactive_shell: ``!i cmd`` and known interactive programs get the terminal while the UI steps aside, then
pi comes back with the outcome; outside the interactive UI they are refused with Pi's text."""

from __future__ import annotations

from pathlib import Path

from tests.interactive.tmux_kit import pi_rig


def test_the_command_gets_the_terminal_and_pi_comes_back(tmp_path: Path) -> None:
    with pi_rig(tmp_path, "ishell") as rig:
        rig.start("-e", "plugin:interactive_shell", "--no-session", env={"SHELL": "/bin/bash"})
        rig.tmux.wait_for("fake-model")
        rig.command("""!i read -p "name? " n; echo "hi $n" > greeting.txt""")
        rig.tmux.wait_for("name?", visible=True)
        rig.tmux.type("bob")
        rig.tmux.keys("Enter")
        rig.tmux.wait_for("(interactive command completed successfully)")
        assert (rig.cwd / "greeting.txt").read_text() == "hi bob\n"
        rig.command("!i exit 3")
        rig.tmux.wait_for("(interactive command exited with code 3)")
        assert "EXITED" not in rig.tmux.screen()


def test_outside_the_tui_interactive_commands_are_refused(example) -> None:
    client = example.rpc("interactive_shell", "--no-session", env={"INTERACTIVE_COMMANDS": "myrepl"})
    for command in ("vim notes.txt", "cat x | less", "myrepl --fast", "i echo forced"):
        answer = client.bash(command)
        assert (answer["output"], answer["exitCode"]) == ("(interactive commands require TUI)", 1), command
    assert client.bash("echo plain")["output"].strip() == "plain"
