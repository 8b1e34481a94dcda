"""``pi config`` (issue 37.2): Pi 1.6.0's command for switching resources on and off, here the plugins pi would
discover, saved to the global or the project settings; and a bare word naming a Pi 1.6.0 command or one of the
commands pi's plugins ship never becomes a prompt when that command is missing from the run."""

from __future__ import annotations

import re
import shutil
import tomllib

import pytest

from pi_core.testing.fake_server import Reply

from .conftest import PiRunner


def _listed(out: str) -> dict[str, str]:
    """``name -> mark`` of every plugin line of the printed list."""
    found = (re.match(r"[ >]   (\[.\]) (\S+)", line) for line in out.splitlines())
    return {m.group(2): m.group(1) for m in found if m}


def test_config_lists_plugins_and_reads_each_scope(pi_anthropic: PiRunner) -> None:
    pi = pi_anthropic
    (pi.home / "extensions").mkdir()
    (pi.home / "extensions" / "my_ext.py").write_text("")
    (pi.home / "settings.toml").write_text('disabledPlugins = ["batch"]\nenabledPlugins = ["bookmark"]\n')
    done = pi.run("config")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"Global plugins: {pi.home / 'settings.toml'}\n")
    for heading in ("  Built-in", "  Opt-in", "  Extension files"):
        assert f"\n{heading}\n" in done.stdout
    marks = _listed(done.stdout)
    assert marks["mcp"] == marks["read"] == marks["my_ext"] == "[x]"
    assert marks["batch"] == "[ ]" and marks["bookmark"] == "[x]" and marks["auto_commit_on_exit"] == "[ ]"
    assert not pi.server.requests  # a command, not a prompt

    (pi.cwd / ".pi").mkdir()
    (pi.cwd / ".pi" / "settings.toml").write_text('disabledPlugins = ["grep"]\n')
    refused = pi.run("config", "-l")
    assert refused.returncode == 1 and "is not trusted" in refused.stderr and "--approve" in refused.stderr
    local = pi.run("config", "-l", "-a")
    assert local.returncode == 0, local.stderr
    assert local.stdout.startswith(f"Project plugins: {pi.cwd / '.pi' / 'settings.toml'}\n")
    marks = _listed(local.stdout)
    assert marks["grep"] == "[ ]" and marks["read"] == "[x]"
    assert marks["batch"] == "[-]" and "(off in the global settings)" in local.stdout


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_config_toggles_in_the_terminal_and_saves_each_scope(pi_anthropic: PiRunner) -> None:
    from pi_core.testing.tmux import tmux_pi

    class Runner:
        cwd = pi_anthropic.cwd

        def env(self) -> dict[str, str]:
            return pi_anthropic.env()

        def args(self, plugin: str | None, *args: str) -> list[str]:
            return list(args)

    with tmux_pi(Runner(), "cli-config") as rig:
        rig.start(None, "config")
        rig.tmux.wait_for("Global plugins")
        rig.tmux.type("mcp")
        rig.tmux.wait_for("> mcp\n")
        rig.tmux.keys("Space")
        rig.tmux.wait_for("mcp off: saved to")
        assert tomllib.loads((pi_anthropic.home / "settings.toml").read_text())["disabledPlugins"] == ["mcp"]
        rig.tmux.keys("Tab")
        rig.tmux.wait_for("[-] mcp  (off in the global settings)")
        rig.tmux.keys("Space")  # off in the global scope: the project cannot turn it on
        rig.tmux.wait_for("mcp: off in the global settings")
        rig.tmux.keys("BSpace", "BSpace", "BSpace")
        rig.tmux.type("grep")
        rig.tmux.wait_for("> grep\n")
        rig.tmux.keys("Space")
        rig.tmux.wait_for("grep off: saved to")
        rig.tmux.keys("Tab")
        rig.tmux.wait_for("Global plugins")
        rig.tmux.keys("Space")  # grep again, globally this time
        rig.tmux.wait_for("grep off: saved to")
        rig.tmux.keys("Escape")
        rig.tmux.wait_for("EXITED=0")
    project = tomllib.loads((pi_anthropic.cwd / ".pi" / "settings.toml").read_text())
    assert project["disabledPlugins"] == ["grep"]
    assert tomllib.loads((pi_anthropic.home / "settings.toml").read_text())["disabledPlugins"] == ["mcp", "grep"]
    assert _listed(pi_anthropic.run("config").stdout)["grep"] == "[ ]"


@pytest.mark.parametrize(("argv", "name"), [
    (["--no-mcp", "mcp", "list"], "mcp"),
    (["--disable-plugin", "batch", "batch", "tasks.jsonl", "-o", "out"], "batch"),
    (["--disable-plugin", "acp", "acp"], "acp"),
])
def test_a_missing_plugin_command_is_never_a_prompt(pi_anthropic: PiRunner, argv: list[str], name: str) -> None:
    done = pi_anthropic.run(*argv)
    assert done.returncode == 1
    assert done.stderr.startswith(f'Error: "pi {name}" is a command of the {name} plugin, which is not loaded')
    assert f"pi -- {name} ..." in done.stderr and "Traceback" not in done.stderr
    assert not pi_anthropic.server.requests


def test_the_word_after_dashes_or_p_is_a_prompt(pi_anthropic: PiRunner) -> None:
    pi_anthropic.server.add(Reply(text="first"), Reply(text="second"))
    assert pi_anthropic.run("--no-session", "--", "mcp").stdout == "first\n"
    assert pi_anthropic.run("--no-session", "-p", "config").stdout == "second\n"
    sent = [r.body["messages"][-1]["content"] for r in pi_anthropic.server.requests]
    assert [c if isinstance(c, str) else c[0]["text"] for c in sent] == ["mcp", "config"]
