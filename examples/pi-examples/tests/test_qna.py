"""qna: /qna asks the model for the last reply's questions and loads them into the editor as Q:/A: lines."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest
from pi_examples.qna import LastReplyError, last_assistant_text, qna

from pi_core.testing.fake_script import Reply
from pi_core.testing.kit import session_entries
from pi_core.testing.tmux import tmux_available, tmux_pi
from pi_core.tui import strip_ansi
from pi_core.types import AssistantMessage, TextContent
from pi_core.ui import PlainTheme


def reply(text: str, stop: str = "stop") -> dict[str, Any]:
    return {"type": "message", "message": {"role": "assistant", "stopReason": stop,
                                           "content": [{"type": "text", "text": text}]}}


class UI:
    """ctx.ui of the interactive mode as far as /qna uses it; ``keys`` are pressed once the loader shows."""

    def __init__(self, keys: tuple[str, ...] = ()) -> None:
        self.keys, self.notices, self.editor, self.screens = keys, [], "", []

    async def custom(self, factory: Any, **_: Any) -> Any:
        answer: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        component = factory(None, PlainTheme(), None, lambda v: answer.done() or answer.set_result(v))
        self.screens.append([strip_ansi(line) for line in component.render(50)])
        for key in self.keys:
            component.handle_input(key)
        return await answer

    def notify(self, message: str, level: str = "info") -> None:
        self.notices.append((message, level))

    def set_editor_text(self, text: str) -> None:
        self.editor = text


class Models:
    def __init__(self, answer: str, delay: float = 0.0) -> None:
        self.answer, self.delay, self.calls = answer, delay, []

    async def complete(self, model: Any, messages: list[Any], **kw: Any) -> AssistantMessage:
        self.calls.append((messages, kw))
        signal = kw["signal"]
        for _ in range(int(self.delay * 100)):
            if signal.aborted:
                return AssistantMessage(content=[], stop_reason="aborted")
            await asyncio.sleep(0.01)
        return AssistantMessage(content=[TextContent(text=self.answer)], stop_reason="stop")


def run(branch: list[dict[str, Any]], models: Models, ui: UI, mode: str = "interactive") -> None:
    ctx = SimpleNamespace(mode=mode, model=SimpleNamespace(id="fake-model"), ui=ui, model_registry=models,
                          session_manager=SimpleNamespace(get_branch=lambda: session_entries(*branch)))
    asyncio.run(qna("", ctx, set()))  # type: ignore[arg-type]


def test_questions_land_in_the_editor() -> None:
    ui, models = UI(), Models("Q: Which DB?\nA: ")
    run([reply("Which DB? Which language?")], models, ui)
    assert ui.editor == "Q: Which DB?\nA: "
    assert ui.notices == [("Questions loaded. Edit and submit when ready.", "info")]
    messages, options = models.calls[0]
    assert messages == ["Which DB? Which language?"]
    assert options["system_prompt"].startswith("You are a question extractor.")
    assert any("Extracting questions using fake-model..." in line for line in ui.screens[0])


def test_escape_during_the_extraction_cancels() -> None:
    ui = UI(keys=("\x1b",))
    run([reply("Which DB?")], Models("Q: x", delay=5), ui)
    assert ui.editor == "" and ui.notices == [("Cancelled", "info")]


def test_an_aborted_reply_is_refused() -> None:
    ui = UI()
    run([reply("Which DB?", stop="aborted")], Models("unused"), ui)
    assert ui.notices == [("Last assistant message incomplete (aborted)", "error")]
    with pytest.raises(LastReplyError, match="No assistant messages found"):
        last_assistant_text(session_entries({"type": "message", "message": {"role": "user", "content": "hi"}}))


def test_other_modes_are_told_it_needs_the_interactive_ui(example) -> None:
    client = example.rpc("qna", "--no-session")
    client.request("prompt", message="/qna")
    notice = client.wait_for_event(lambda e: e.get("method") == "notify")
    assert notice["message"] == "qna requires interactive mode" and notice["notifyType"] == "error"


@pytest.mark.skipif(not tmux_available(), reason="tmux is not installed")
def test_the_loader_then_the_questions_in_the_editor_on_screen(example) -> None:
    questions = "Q: Which language?\nA:\n\nQ: Which version?\nA:"
    example.server.add(Reply(text="Which language? And which version?"),
                       Reply(text=questions, chunk_size=4, chunk_delay=0.15),  # slow: the loader stays a while
                       Reply(text=questions * 20, chunk_size=4, chunk_delay=0.2))
    with tmux_pi(example, "qna") as tui:
        tui.start("qna", "--no-session")
        tui.tmux.wait_for("(fake) fake-model")
        tui.command("hello")
        tui.tmux.wait_for("And which version?")
        tui.command("/qna")
        tui.tmux.wait_for("Extracting questions using fake-model...", visible=True)
        screen = tui.tmux.wait_for("Questions loaded. Edit and submit when ready.")
        rows = [line.strip() for line in screen.splitlines()]
        assert rows[rows.index("Q: Which language?"):][:5] == ["Q: Which language?", "A:", "", "Q: Which version?",
                                                               "A:"]  # in the editor, as Q:/A: lines
        tui.tmux.keys("C-c")  # empty the editor again
        tui.command("/qna")
        tui.tmux.wait_for("Extracting questions using fake-model...", visible=True)
        tui.tmux.keys("Escape")  # cancels the extraction
        tui.tmux.wait_for("Cancelled")
        tui.tmux.wait_gone("Extracting questions")
