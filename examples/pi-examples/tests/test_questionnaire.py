"""questionnaire: without a UI the model reads Pi's error; in the TUI the user answers in the component
(one question: a pick ends it; several: tabs, a typed answer, the Submit tab) and the model gets the answers."""

from __future__ import annotations

import pytest

from pi_core.testing.fake_server import Reply
from pi_core.testing.tmux import tmux_available, tmux_pi

needs_tmux = pytest.mark.skipif(not tmux_available(), reason="tmux is not installed")

SCOPE = {"id": "scope", "label": "Scope", "prompt": "How far should the change go?",
         "options": [{"value": "small", "label": "Just this file"},
                     {"value": "wide", "label": "The whole module", "description": "touches more code"}]}
NAME = {"id": "name", "prompt": "What should it be called?", "options": [{"value": "foo", "label": "foo"}]}


def test_print_mode_has_no_ui_to_ask(example) -> None:
    example.server.add(Reply(tool_calls=[("questionnaire", {"questions": [SCOPE]})]), Reply(text="ok"))
    done = example.run("questionnaire", "--no-session", "-p", "ask me")
    assert done.returncode == 0, done.stderr
    assert example.tool_results(1) == ["Error: UI not available (running in non-interactive mode)"]


@needs_tmux
def test_one_question_ends_with_the_pick(example) -> None:
    with tmux_pi(example, "questionnaire-one") as tui:
        tui.start("questionnaire")
        tui.tmux.wait_for("(fake) fake-model")
        example.server.add(Reply(tool_calls=[("questionnaire", {"questions": [SCOPE]})]), Reply(text="noted"))
        tui.command("ask me")
        screen = tui.tmux.wait_for("↑↓ navigate • Enter select • Esc cancel", visible=True)
        assert "> 1. Just this file" in screen and "touches more code" in screen and "3. Type something." in screen
        assert "Submit" not in screen
        tui.tmux.keys("Down")
        tui.tmux.wait_for("> 2. The whole module", visible=True)
        tui.tmux.keys("Enter")
        tui.tmux.wait_for("noted")
        assert example.tool_results(1) == ["Scope: user selected: 2. The whole module"]


@needs_tmux
def test_several_questions_use_tabs_and_a_typed_answer(example) -> None:
    with tmux_pi(example, "questionnaire-tabs") as tui:
        tui.start("questionnaire")
        tui.tmux.wait_for("(fake) fake-model")
        example.server.add(Reply(tool_calls=[("questionnaire", {"questions": [SCOPE, NAME]})]), Reply(text="thanks"))
        tui.command("ask me")
        screen = tui.tmux.wait_for("Tab/←→ navigate • ↑↓ select • Enter confirm • Esc cancel", visible=True)
        assert "□ Scope" in screen and "□ Q2" in screen and "✓ Submit" in screen
        tui.tmux.keys("Enter")  # Scope: Just this file, on to Q2
        tui.tmux.wait_for("What should it be called?", visible=True)
        tui.tmux.keys("Down", "Enter")  # Type something.
        tui.tmux.wait_for("Your answer:", visible=True)
        tui.tmux.type("bar")
        tui.tmux.keys("Enter")
        screen = tui.tmux.wait_for("Ready to submit", visible=True)
        assert "Scope: Just this file" in screen and "Q2: (wrote) bar" in screen and "Press Enter to submit" in screen
        tui.tmux.keys("Enter")
        tui.tmux.wait_for("thanks")
        assert example.tool_results(1) == ["Scope: user selected: 1. Just this file\nQ2: user wrote: bar"]


@needs_tmux
def test_escape_cancels_and_the_submit_tab_lists_what_is_missing(example) -> None:
    with tmux_pi(example, "questionnaire-esc") as tui:
        tui.start("questionnaire")
        tui.tmux.wait_for("(fake) fake-model")
        example.server.add(Reply(tool_calls=[("questionnaire", {"questions": [SCOPE, NAME]})]), Reply(text="fine"))
        tui.command("ask me")
        tui.tmux.wait_for("How far should the change go?", visible=True)
        tui.tmux.keys("BTab")  # back around to the Submit tab
        screen = tui.tmux.wait_for("Unanswered: Scope, Q2", visible=True)
        tui.tmux.keys("Enter")  # nothing answered: Enter does nothing
        tui.tmux.keys("Escape")
        tui.tmux.wait_for("fine")
        assert example.tool_results(1) == ["User cancelled the questionnaire"]
        assert "Ready to submit" in screen
