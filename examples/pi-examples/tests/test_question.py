"""question: without a UI the model reads Pi's error; with one the component's answer becomes the tool result."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from pi_examples.question import QuestionComponent, execute

from pi_core import ToolContext
from pi_core.testing.fake_script import Reply
from pi_core.testing.tmux import tmux_available, tmux_pi
from pi_core.tui import strip_ansi
from pi_core.ui import PlainTheme

OPTIONS = [{"label": "A"}, {"label": "B", "description": "the second one"}]


def test_print_mode_has_no_ui_to_ask(example) -> None:
    example.server.add(Reply(tool_calls=[("question", {"question": "Which?", "options": OPTIONS})]), Reply(text="ok"))
    done = example.run("question", "--no-session", "-p", "ask me")
    assert done.returncode == 0, done.stderr
    assert example.tool_results(1) == ["Error: UI not available (running in non-interactive mode)"]


class KeysUI:
    """ctx.ui.custom as the interactive UI runs it: build the component, feed it keys until done()."""

    def __init__(self, *keys: str) -> None:
        self.keys = keys
        self.screens: list[list[str]] = []

    async def custom(self, factory: Any, **_: Any) -> Any:
        answer: list[Any] = []
        component = factory(None, PlainTheme(), None, answer.append)
        for key in self.keys:
            self.screens.append([strip_ansi(line) for line in component.render(40)])
            component.handle_input(key)
            if answer:
                break
        return answer[0] if answer else "never answered"


class Pi:
    mode = "interactive"

    def __init__(self, ui: KeysUI) -> None:
        self.ui = ui


def ask(*keys: str) -> tuple[str, dict[str, Any], KeysUI]:
    ui = KeysUI(*keys)
    ctx = ToolContext(cwd=Path("."), pi=Pi(ui))  # type: ignore[arg-type]
    result = asyncio.run(execute({"question": "Which one?", "options": OPTIONS}, ctx))
    return result.content[0].text, result.details, ui


def test_picking_an_option() -> None:
    text, details, ui = ask("\x1b[B", "\r")
    assert text == "User selected: 2. B"
    assert details == {"question": "Which one?", "options": ["A", "B"], "answer": "B", "wasCustom": False}
    first = ui.screens[0]
    assert " Which one?" in first and "> 1. A" in first and "  2. B" in first and "  3. Type something." in first
    assert "       the second one" not in first and "     the second one" in first
    assert all(len(line) <= 40 for line in first)


def test_typing_an_answer() -> None:
    text, details, ui = ask("\x1b[B", "\x1b[B", "\r", "C", "\r")
    assert text == "User wrote: C" and details["wasCustom"] is True
    assert "> 3. Type something. ✎" in ui.screens[-1] and " Your answer:" in ui.screens[-1]


def test_escape_cancels_and_empty_answers_go_back() -> None:
    assert ask("\x1b")[0] == "User cancelled the selection"
    # an empty answer leaves the answer line; Escape there goes back to the options, Escape again cancels
    text, _, ui = ask("\x1b[B", "\x1b[B", "\r", "\r", "\r", "x", "\x1b", "\x1b")
    assert text == "User cancelled the selection"
    assert " Your answer:" not in ui.screens[-1]


def test_the_component_wraps_long_text_in_narrow_terminals() -> None:
    component = QuestionComponent("A long question that needs wrapping", [{"label": "An option label"}],
                                  PlainTheme(), None, lambda a: None)
    lines = [strip_ansi(line) for line in component.render(16)]
    assert all(len(line) <= 16 for line in lines) and " A long question" in lines


@pytest.mark.skipif(not tmux_available(), reason="tmux is not installed")
def test_the_model_asks_and_the_typed_answer_is_its_tool_result(example) -> None:
    example.server.add(Reply(tool_calls=[("question", {"question": "Which colour?", "options": OPTIONS})]),
                       Reply(text="Noted."))
    with tmux_pi(example, "question") as tui:
        tui.start("question", "--no-session")
        tui.tmux.wait_for("(fake) fake-model")
        tui.command("ask me")
        screen = tui.tmux.wait_for("Enter to select • Esc to cancel", visible=True)  # the component, not the call row
        rows = [line.strip() for line in screen.splitlines()]
        assert "Which colour?" in rows and "> 1. A" in rows and "the second one" in rows
        tui.tmux.keys("Down", "Down", "Enter")
        tui.tmux.wait_for("Your answer:", visible=True)
        tui.tmux.type("teal")
        tui.tmux.keys("Enter")
        tui.tmux.wait_for("Noted.")
    assert example.tool_results(1) == ["User wrote: teal"]
