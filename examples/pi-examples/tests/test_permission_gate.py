"""permission_gate: a destructive bash command waits for the user's answer; with nobody to ask it is refused."""

from __future__ import annotations

import pytest

from pi_core.testing.fake_script import Reply
from pi_core.testing.tmux import tmux_available, tmux_pi

RM = ("bash", {"command": "rm -rf build"})


def test_print_mode_blocks_a_destructive_command_and_runs_harmless_ones(example) -> None:
    (example.cwd / "build").mkdir()
    example.server.add(Reply(tool_calls=[RM, ("bash", {"command": "echo fine"})]), Reply(text="ok"))
    done = example.run("permission_gate", "--no-session", "-p", "clean up")
    assert done.returncode == 0, done.stderr
    assert example.tool_results(1)[0] == "Dangerous command blocked (no UI for confirmation)"
    assert example.tool_results(1)[1].strip() == "fine"
    assert (example.cwd / "build").is_dir()


def test_rpc_asks_and_no_blocks_the_command(example, ui) -> None:
    (example.cwd / "build").mkdir()
    example.server.add(Reply(tool_calls=[RM]), Reply(text="ok"))
    client = example.rpc("permission_gate", "--no-session")
    client.prompt("clean up")
    ask = ui(client, "select")
    assert ask["title"] == "⚠️ Dangerous command:\n\n  rm -rf build\n\nAllow?"
    assert ask["options"] == ["Yes", "No"]
    client.respond_ui(ask["id"], value="No")
    end = client.wait_for_event("tool_execution_end", timeout=30)
    assert end["isError"] is True
    assert end["result"]["content"][0]["text"] == "Blocked by user"
    client.wait_for_event("agent_end", timeout=30)
    assert (example.cwd / "build").is_dir()
    assert example.tool_results(1)[-1] == "Blocked by user"


def test_rpc_yes_lets_the_command_run_and_cancel_blocks(example, ui) -> None:
    (example.cwd / "build").mkdir()
    example.server.add(Reply(tool_calls=[RM]), Reply(text="ok"),
                       Reply(tool_calls=[("bash", {"command": "sudo true"})]), Reply(text="ok"))
    client = example.rpc("permission_gate", "--no-session")
    client.prompt("clean up")
    client.respond_ui(ui(client, "select")["id"], value="Yes")
    client.wait_for_event("agent_end", timeout=30)
    assert not (example.cwd / "build").exists()

    mark = client.event_count()
    client.prompt("again")
    ask = ui(client, "select", after=mark)
    assert "sudo true" in ask["title"]
    client.respond_ui(ask["id"], cancelled=True)
    client.wait_for_event("agent_end", after=mark, timeout=30)
    assert example.tool_results(3)[-1] == "Blocked by user"


@pytest.mark.skipif(not tmux_available(), reason="tmux is not installed")
def test_in_the_terminal_no_blocks_the_command_and_yes_runs_it(example) -> None:
    (example.cwd / "build").mkdir()
    example.server.add(Reply(tool_calls=[RM]), Reply(text="kept it"), Reply(tool_calls=[RM]), Reply(text="removed it"))
    with tmux_pi(example, "permission-gate") as tui:
        tui.start("permission_gate", "--no-session")
        tui.tmux.wait_for("(fake) fake-model")
        tui.command("clean up")
        shown = tui.tmux.wait_for("Allow?", visible=True)
        assert "Dangerous command:" in shown and "rm -rf build" in shown
        tui.tmux.keys("Down")
        tui.tmux.keys("Enter")  # "No"
        tui.tmux.wait_for("kept it")
        tui.tmux.wait_gone("Allow?")
        assert "Blocked by user" in tui.tmux.screen()
        assert (example.cwd / "build").is_dir() and example.tool_results(1)[-1] == "Blocked by user"

        tui.command("clean up, really")
        tui.tmux.wait_for("Allow?", visible=True)
        tui.tmux.keys("Enter")  # "Yes"
        tui.tmux.wait_for("removed it")
        assert not (example.cwd / "build").exists()
