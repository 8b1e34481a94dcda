"""handoff: /handoff <goal> drafts a prompt from the conversation, lets the user edit it, opens a new session."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest
from pi_examples.handoff import handoff, handoff_messages

from pi_core.extension import SessionChange
from pi_core.testing.fake_script import Reply
from pi_core.testing.kit import session_entries
from pi_core.testing.tmux import tmux_available, tmux_pi
from pi_core.types import AssistantMessage, TextContent
from pi_core.ui import PlainTheme

BRANCH = [{"type": "message", "id": "a", "message": {"role": "user", "content": "fix the parser"}},
          {"type": "message", "id": "b", "message": {"role": "assistant", "stopReason": "stop",
                                                     "content": [{"type": "text", "text": "Fixed parse.py"}]}}]


class UI:
    def __init__(self, keys: tuple[str, ...] = (), edited: str | None = "EDITED") -> None:
        self.keys, self.edited, self.notices, self.editor_calls, self.text = keys, edited, [], [], ""

    async def custom(self, factory: Any, **_: Any) -> Any:
        answer: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        component = factory(None, PlainTheme(), None, lambda v: answer.done() or answer.set_result(v))
        for key in self.keys:
            component.handle_input(key)
        return await answer

    async def editor(self, title: str, prefill: str = "") -> str | None:
        self.editor_calls.append((title, prefill))
        return self.edited

    def notify(self, message: str, level: str = "info") -> None:
        self.notices.append(message)

    def set_editor_text(self, text: str) -> None:
        self.text = text


class Models:
    def __init__(self, delay: float = 0.0) -> None:
        self.calls: list[tuple[list[Any], dict[str, Any]]] = []
        self.delay = delay

    async def complete(self, model: Any, messages: list[Any], **kw: Any) -> AssistantMessage:
        self.calls.append((messages, kw))
        for _ in range(int(self.delay * 100)):
            if kw["signal"].aborted:
                return AssistantMessage(content=[], stop_reason="aborted")
            await asyncio.sleep(0.01)
        return AssistantMessage(content=[TextContent(text="## Context\nparser work")], stop_reason="stop")


def run(args: str, ui: UI, models: Models, branch: list[dict[str, Any]] = BRANCH) -> tuple[UI, list[Any]]:
    new_ui = UI()
    sessions: list[Any] = []

    async def new_session(*, parent_session: str | None = None, with_session: Any = None) -> SessionChange:
        sessions.append(parent_session)
        with_session(SimpleNamespace(ui=new_ui))
        return SessionChange(cancelled=False)

    ctx = SimpleNamespace(mode="interactive", model=SimpleNamespace(id="m"), ui=ui, model_registry=models,
                          new_session=new_session,
                          session_manager=SimpleNamespace(get_branch=lambda: session_entries(*branch), session_file="/s/old.jsonl"))
    asyncio.run(handoff(args, ctx, set()))  # type: ignore[arg-type]
    return new_ui, sessions


def test_the_draft_is_edited_and_opens_a_new_session() -> None:
    ui, models = UI(), Models()
    new_ui, sessions = run(" add tests ", ui, models)
    messages, options = models.calls[0]
    assert options["system_prompt"].startswith("You are a context transfer assistant")
    assert "## User's Goal for New Thread\n\nadd tests" in messages[0]
    assert "[User]: fix the parser" in messages[0] and "Fixed parse.py" in messages[0]
    assert ui.editor_calls == [("Edit handoff prompt", "## Context\nparser work")]
    assert sessions == ["/s/old.jsonl"]
    assert new_ui.text == "EDITED" and new_ui.notices == ["Handoff ready. Submit when ready."]


def test_cancelling_the_loader_or_the_editor() -> None:
    ui = UI(keys=("\x1b",))
    _, sessions = run("go", ui, Models(delay=5))
    assert ui.notices == ["Cancelled"] and sessions == []
    ui = UI(edited=None)
    _, sessions = run("go", ui, Models())
    assert ui.notices == ["Cancelled"] and sessions == []


def test_usage_and_empty_conversations() -> None:
    ui = UI()
    run("   ", ui, Models())
    assert ui.notices == ["Usage: /handoff <goal for new thread>"]
    ui = UI()
    run("go", ui, Models(), branch=[])
    assert ui.notices == ["No conversation to hand off"]


def test_after_a_compaction_only_the_summary_and_the_kept_entries_go() -> None:
    branch = [{"type": "message", "id": "1", "message": {"role": "user", "content": "old"}},
              {"type": "message", "id": "2", "message": {"role": "user", "content": "kept"}},
              {"type": "compaction", "id": "3", "summary": "SUM", "firstKeptEntryId": "2", "tokensBefore": 9},
              {"type": "message", "id": "4", "message": {"role": "user", "content": "new"}}]
    roles = [(m["role"], m.get("content") or m.get("summary")) for m in handoff_messages(session_entries(*branch))]
    assert roles == [("compactionSummary", "SUM"), ("user", "kept"), ("user", "new")]


def test_other_modes_are_told_it_needs_the_interactive_ui(example) -> None:
    client = example.rpc("handoff", "--no-session")
    client.request("prompt", message="/handoff add tests")
    notice = client.wait_for_event(lambda e: e.get("method") == "notify")
    assert notice["message"] == "handoff requires interactive mode" and notice["notifyType"] == "error"


@pytest.mark.skipif(not tmux_available(), reason="tmux is not installed")
def test_the_draft_is_edited_on_screen_and_opens_in_a_new_session(example) -> None:
    example.server.add(Reply(text="Fixed parse.py"),
                       Reply(text="## Context\nparser work", chunk_size=2, chunk_delay=0.05),
                       Reply(text="Taking over."))
    with tmux_pi(example, "handoff") as tui:
        tui.start("handoff")
        tui.tmux.wait_for("(fake) fake-model")
        tui.command("fix the parser")
        tui.tmux.wait_for("Fixed parse.py")
        tui.command("/handoff add tests")
        tui.tmux.wait_for("Generating handoff prompt...", visible=True)
        screen = tui.tmux.wait_for("Edit handoff prompt", visible=True)
        rows = [line.strip() for line in screen.splitlines()]
        assert rows[rows.index("Edit handoff prompt"):].count("parser work") == 1 and "## Context" in rows
        tui.tmux.keys("C-j")
        tui.tmux.type("then add tests")
        tui.tmux.wait_for("then add tests", visible=True)
        tui.tmux.keys("Enter")
        screen = tui.tmux.wait_for("Handoff ready. Submit when ready.")
        screen = tui.tmux.wait_for("then add tests", visible=True)
        rows = [line.strip() for line in screen.splitlines()]
        assert rows[rows.index("## Context"):][:3] == ["## Context", "parser work", "then add tests"]  # the editor
        tui.tmux.keys("Enter")  # sent in the new session, which is written to disk with its first reply
        tui.tmux.wait_for("Taking over.")
    assert "then add tests" in example.user_text(2) and len(example.server.requests[2].body["messages"]) == 1
    sessions = sorted(example.home.rglob("*.jsonl"), key=lambda p: p.stat().st_mtime)
    assert len(sessions) == 2 and str(sessions[0]) in sessions[1].read_text().splitlines()[0]  # the parent
