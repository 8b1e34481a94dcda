"""Session commands (/new, /resume, /tree, /fork, /name, /export, /compact) on a real SessionManager."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from pi_core.sessions.manager import SessionManager
from pi_core.testing.fake_provider import FakeProvider, reply
from tests.interactive.harness import Harness, make_session

ENTER, ESC, DOWN = "\r", "\x1b", "\x1b[B"


def run(h_factory: Any, body: Any) -> Harness:
    async def main() -> Harness:
        h = h_factory()
        await h.start()
        await body(h)
        return h

    return asyncio.run(main())


def test_new_resume_tree_fork_and_name(tmp_path: Path, pipe: Any) -> None:
    sessions = tmp_path / "sessions"
    store = SessionManager.create(tmp_path, sessions)
    provider = FakeProvider(reply("first answer"), reply("second answer"), reply("fresh answer"))
    session = make_session(provider, tmp_path, store=store)

    async def body(h: Harness) -> None:
        h.send("first question" + ENTER)
        await h.wait_for(lambda: "first answer" in h.screen() and not h.ui.busy)
        h.send("second question" + ENTER)
        await h.wait_for(lambda: "second answer" in h.screen() and not h.ui.busy)
        h.send("/name my work" + ENTER)
        await h.wait_for(lambda: "Session name: my work" in h.screen())
        first_file = store.session_file

        # /tree: go back to the first answer; the transcript is reloaded from there.
        h.send("/tree" + ENTER)
        await h.wait_for(lambda: h.ui.panel is not None)
        h.send("first answer" + ENTER)
        await h.wait_for(lambda: h.ui.panel is not None and h.ui.panel.title == "Summarize branch?")
        h.send(ENTER)  # No summary
        await h.wait_for(lambda: "Navigated to selected point" in h.screen())
        assert [m.role for m in session.messages] == ["user", "assistant"]
        assert session.messages[-1].text() == "first answer"

        # /new: an empty session in a new file.
        h.send("/new" + ENTER)
        await h.wait_for(lambda: "New session started" in h.screen())
        assert session.messages == []
        h.send("fresh question" + ENTER)
        await h.wait_for(lambda: "fresh answer" in h.screen() and not h.ui.busy)
        assert store.session_file != first_file

        # /resume: back to the named session (the picker lists the current one first, as Pi).
        h.send("/resume" + ENTER)
        await h.wait_for(lambda: h.ui.panel is not None)
        assert [row.info.name for row in h.ui.panel.items] == [None, "my work"]
        h.send(DOWN + ENTER)
        await h.wait_for(lambda: "Resumed" in h.screen())
        assert store.session_file == first_file
        assert session.messages[0].text() == "first question"

        # /fork: from the first user message; its text comes back to the editor.
        h.send("/fork" + ENTER)
        await h.wait_for(lambda: h.ui.panel is not None)
        h.send("first question" + ENTER)
        await h.wait_for(lambda: "Forked to a new session" in h.screen())
        assert h.ui.buffer.text == "first question"
        assert store.session_file != first_file
        assert await h.quit() == 0

    run(lambda: Harness(session, pipe), body)


def test_export_and_compact(tmp_path: Path, pipe: Any) -> None:
    store = SessionManager.create(tmp_path, tmp_path / "sessions")
    provider = FakeProvider(reply("answer"), reply("## Goal\nShort summary of the work."))
    session = make_session(provider, tmp_path, store=store)

    async def body(h: Harness) -> None:
        h.send("/export" + ENTER)
        await h.wait_for(lambda: "Nothing to export yet" in h.screen())
        h.send("question" + ENTER)
        await h.wait_for(lambda: "answer" in h.screen() and not h.ui.busy)
        out = tmp_path / "out.html"
        h.send(f"/export {out}" + ENTER)
        await h.wait_for(lambda: "Exported to:" in h.screen())
        assert out.read_text().lstrip().lower().startswith("<!doctype html")
        h.send("/compact keep it short" + ENTER)
        await h.wait_for(lambda: "Context compacted" in h.screen())
        assert "keep it short" in provider.contexts[-1].model_dump_json()  # the instructions reach the summary
        assert await h.quit() == 0

    run(lambda: Harness(session, pipe), body)


def test_a_continued_session_shows_its_history_at_start(tmp_path: Path, pipe: Any) -> None:
    from pi_core.types import (
        AssistantMessage,
        TextContent,
        ToolCall,
        ToolResultMessage,
        UserMessage,
    )

    session = make_session(FakeProvider(), tmp_path)
    session.agent.state.messages = [
        UserMessage(content="earlier question"),
        AssistantMessage(content=[TextContent(text="checking"), ToolCall(id="t1", name="read",
                                                                         arguments={"path": "old.txt"})],
                         stop_reason="toolUse"),
        ToolResultMessage(tool_call_id="t1", tool_name="read", content=[TextContent(text="a\nb")]),
        AssistantMessage(content=[TextContent(text="earlier answer")]),
    ]

    async def body(h: Harness) -> None:
        assert await h.quit() == 0

    screen = run(lambda: Harness(session, pipe), body).screen()
    order = [screen.index(t) for t in ("earlier question", "checking", "read old.txt", "2 lines", "earlier answer")]
    assert order == sorted(order)
