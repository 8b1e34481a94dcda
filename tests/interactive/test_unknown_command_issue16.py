"""Issue 16 item 13 (interactive only): a leading ``/word`` naming no command, template or skill is answered
``Unknown command: /word`` and not sent (print, JSON and RPC keep sending it as text, as Pi). Also item 9
in the interactive mode: a broken models file is reported once, in the header; without any model the footer
reads as Pi's."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from pi_core.testing.fake_server import FakeModelServer, Reply
from tests.interactive.test_tmux_e2e import HEIGHT, WIDTH, Tmux, write_models

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


def test_unknown_slash_command_is_answered_and_not_sent(tmp_path: Path) -> None:
    with FakeModelServer() as server:
        home, cwd = tmp_path / "agent", tmp_path / "project"
        cwd.mkdir()
        write_models(home, server.base_url_for("anthropic-messages"))
        (home / "models.toml").write_text('[providers.broken]\nmodels = [ {id = "m" ]\n')
        (home / "prompts").mkdir()
        (home / "prompts" / "review.md").write_text("Review the code carefully.\n")
        tmux = Tmux(f"pi-unknown-{os.getpid()}-{id(tmp_path)}", "pi")
        env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and k != "TMUX"}
        env.update(PI_CODING_AGENT_DIR=str(home), TERM="xterm-256color")
        pi = f"{sys.executable} -c 'from pi_core.app.cli import cli; cli()' --provider fake --model fake-model --tui-mode regular"
        subprocess.run(["tmux", "-L", tmux.socket, "new-session", "-d", "-s", "pi", "-x", str(WIDTH), "-y",
                        str(HEIGHT), "-c", str(cwd), "bash", "-c", f"{pi} 2>{tmp_path / 'stderr.txt'}; sleep 60"],
                       env=env, check=True, timeout=20)
        try:
            screen = tmux.wait_for("(fake) fake-model")
            assert screen.count("errors loading models.toml") == 1  # once, in the header
            assert "errors loading models.toml" not in (tmp_path / "stderr.txt").read_text()

            tmux.type("/typo now")
            tmux.keys("Enter")
            screen = tmux.wait_for("Unknown command: /typo")
            assert server.requests == []
            tmux.keys("C-u")  # the text came back to the editor: clear it

            server.add(Reply(text="Reviewed."), Reply(text="Paths are fine."))
            tmux.type("/review")  # a prompt template still goes to the model, expanded
            tmux.keys("Enter")
            tmux.wait_for("Reviewed.")
            assert "Review the code carefully." in str(server.requests[0].body)
            tmux.type("/usr/bin/env is where?")  # a path is a message, not a command
            tmux.keys("Enter")
            tmux.wait_for("Paths are fine.")
            assert len(server.requests) == 2
        finally:
            subprocess.run(["tmux", "-L", tmux.socket, "kill-server"], capture_output=True, timeout=20, check=False)


def test_first_run_without_any_key_says_what_would_fix_it(tmp_path: Path) -> None:
    """Issue 16 item 12: no key, no models file; the start-up warning and the answer to a prompt name the fix."""
    home, cwd = tmp_path / "agent", tmp_path / "project"
    home.mkdir()
    cwd.mkdir()
    tmux = Tmux(f"pi-nokey-{os.getpid()}-{id(tmp_path)}", "pi")
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_TOKEN")) and k != "TMUX"}
    env.update(PI_CODING_AGENT_DIR=str(home), TERM="xterm-256color")
    pi = f"{sys.executable} -c 'from pi_core.app.cli import cli; cli()' --tui-mode regular"
    subprocess.run(["tmux", "-L", tmux.socket, "new-session", "-d", "-s", "pi", "-x", str(WIDTH), "-y", str(HEIGHT),
                    "-c", str(cwd), "bash", "-c", f"{pi}; echo EXITED=$?; sleep 60"], env=env, check=True, timeout=20)
    try:
        screen = tmux.wait_for("No models available.")
        assert str(home / "models.toml") in "".join(screen.split())
        # the footer without a model, as Pi 1.6.0 draws it: an empty zero-token context and the placeholder's id
        stats = tmux.wait_for("0.0%/0 (auto)").rstrip().splitlines()[-1]
        assert stats.startswith("0.0%/0 (auto) ") and stats.endswith(" unknown") and "(unknown)" not in stats
        tmux.type("hi")
        tmux.keys("Enter")
        screen = tmux.wait_for("No model selected.")
        flat = " ".join(screen.split())
        assert "ANTHROPIC_API_KEY" in flat and "/login" in flat and "choose one with /model" in flat
        assert "Traceback" not in screen
        # SIGTERM ends the app as /quit does (before, it only aborted a run and pi outlived its terminal)
        shell = tmux.run("display-message", "-p", "-t", "pi", "#{pane_pid}").strip()
        child = subprocess.run(["pgrep", "-P", shell], capture_output=True, text=True, check=False).stdout.split()
        assert child, "pi is not running under the pane's shell"
        os.kill(int(child[0]), signal.SIGTERM)
        tmux.wait_for("EXITED=143")
    finally:
        subprocess.run(["tmux", "-L", tmux.socket, "kill-server"], capture_output=True, timeout=20, check=False)
