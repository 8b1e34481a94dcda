"""The project_trust example plugin (Pi's project-trust.ts) deciding a project's trust, in print mode and in tmux."""

from __future__ import annotations

import json
import os

from pi_core.testing.runner import PiRunner

from .conftest import ask, marker
from .test_trust_tmux import Screen, pytestmark  # noqa: F401 - the tmux skip applies here too


def test_without_a_ui_it_reports_and_leaves_the_decision_to_pi(pi: PiRunner) -> None:
    rc, _, err = ask(pi, "-e", "plugin:project_trust")
    real = os.path.realpath(pi.cwd)
    assert rc == 0
    assert f"project_trust fired for {real} (mode: text, load: 1)" in err.splitlines()
    assert not marker(pi) and not (pi.home / "trust.json").exists()  # undecided: print mode skips the project
    (pi.home / "trust.json").write_text(json.dumps({real: True}))
    rc, _, err = ask(pi, "-e", "plugin:project_trust")
    assert rc == 0 and marker(pi)  # undecided, so the saved decision applies


def test_its_menu_decides_and_a_note_is_recorded(pi: PiRunner) -> None:
    real = os.path.realpath(pi.cwd)
    screen = Screen(pi)
    try:
        screen.start("-e", "plugin:project_trust")
        shown = screen.wait_for("Project trust for:")
        assert real in shown and "Let built-in prompt decide" in shown
        assert "Trust project folder?" not in shown and not marker(pi)  # the plugin asks first, nothing loaded
        screen.keys("Down")
        screen.keys("Enter")  # "Trust with note and remember"
        screen.wait_for("Project trust note")
        screen.type("reviewed the hooks")
        screen.keys("Enter")
        shown = screen.wait_for("(fake) fake-model")
        assert "Recorded demo note: reviewed the hooks" in screen.text()
        assert marker(pi)
        assert json.loads((pi.home / "trust.json").read_text()) == {real: True}
    finally:
        screen.stop()


def test_leaving_it_to_pi_shows_pis_own_prompt(pi: PiRunner) -> None:
    screen = Screen(pi)
    try:
        screen.start("-e", "plugin:project_trust")
        screen.wait_for("Project trust for:")
        for _ in range(4):
            screen.keys("Down")
        screen.keys("Enter")  # "Let built-in prompt decide"
        screen.wait_for("Trust project folder?")
        assert not marker(pi)
    finally:
        screen.stop()
