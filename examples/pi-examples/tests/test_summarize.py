"""summarize: /summarize sends the conversation to openai/gpt-5.2 and shows the answer in a markdown panel."""

from __future__ import annotations

import json

import pytest
from pi_examples.summarize import SummaryPanel, conversation_text

from pi_core.testing.fake_script import Reply
from pi_core.testing.kit import session_entries
from pi_core.testing.tmux import tmux_available, tmux_pi
from pi_core.tui import strip_ansi
from pi_core.ui import PlainTheme


def add_openai(example) -> None:
    """Provider openai with model gpt-5.2, served by the fake server on the OpenAI completions wire."""
    path = example.home / "models.json"
    models = json.loads(path.read_text())
    models["providers"]["openai"] = {
        "baseUrl": example.server.base_url_for("openai-completions"), "api": "openai-completions",
        "apiKey": "test-key",
        "models": [{"id": "gpt-5.2", "name": "GPT-5.2", "reasoning": True, "input": ["text"],
                    "contextWindow": 100000, "maxTokens": 4096}]}
    path.write_text(json.dumps(models))


def notices(example, client) -> list[str]:
    return [e["message"] for e in example.ui_requests(client, "notify")]


def test_the_conversation_goes_to_gpt_5_2(example) -> None:
    add_openai(example)
    example.server.add(Reply(tool_calls=[("ls", {"path": "."})]), Reply(text="Hi there, I looked around."),
                       Reply(text="## Summary\n\n- greeted"))
    client = example.rpc("summarize", "--no-session")
    client.prompt_and_wait("hello")
    client.request("prompt", message="/summarize")
    client.wait_for_event(lambda e: len(example.server.requests) >= 3, timeout=30)
    request = example.server.requests[2]
    assert request.body["model"] == "gpt-5.2"
    text = json.dumps(request.body["messages"])
    assert "<conversation>" in text and "User: hello" in text and "Assistant: Hi there, I looked around." in text
    assert 'Tool ls was called with args {\\"path\\":\\".\\"}' in text
    client.wait_for_event(lambda e: "Preparing summary..." in notices(example, client), timeout=10)


@pytest.mark.skipif(not tmux_available(), reason="tmux is not installed")
def test_the_tui_shows_the_summary_as_markdown_in_a_panel_enter_closes_it(example) -> None:
    add_openai(example)
    example.server.add(Reply(text="Hi there."), Reply(text="## Goals\n\n- ship **the parser**"))
    with tmux_pi(example, "summarize") as tui:
        tui.start("summarize", "--no-session")
        tui.tmux.wait_for("(fake) fake-model")
        tui.command("hello")
        tui.tmux.wait_for("Hi there.")
        tui.command("/summarize")
        screen = tui.tmux.wait_for("Press Enter or Esc to close")
        assert "Conversation Summary" in screen and "ship the parser" in screen
        assert "**" not in screen and "## Goals" not in screen  # drawn as Markdown, not raw
        assert example.server.requests[1].body["model"] == "gpt-5.2"
        tui.tmux.keys("Enter")
        tui.tmux.wait_gone("Press Enter or Esc to close")
        assert "Conversation Summary" not in tui.tmux.visible()


def test_without_a_key_it_says_so(example) -> None:
    # the catalog's openai/gpt-5.2, and no OPENAI_API_KEY (the fixture drops every *_API_KEY)
    example.server.add(Reply(text="hi"))
    client = example.rpc("summarize", "--no-session")
    client.prompt_and_wait("hello")
    client.request("prompt", message="/summarize")
    client.wait_for_event(lambda e: e.get("message") == "No authentication configured for openai/gpt-5.2", timeout=20)
    assert len(example.server.requests) == 1


def test_an_empty_conversation_has_nothing_to_summarize(example) -> None:
    client = example.rpc("summarize", "--no-session")
    client.request("prompt", message="/summarize")
    notice = client.wait_for_event(lambda e: e.get("method") == "notify")
    assert notice["message"] == "No conversation text found" and notice["notifyType"] == "warning"


def test_the_panel_draws_markdown_and_closes_on_enter() -> None:
    closed: list[object] = []
    panel = SummaryPanel("## Goals\n\n- ship **it**", PlainTheme(), closed.append)
    lines = [strip_ansi(line) for line in panel.render(40)]
    assert lines[0] == "─" * 40 and lines[-1] == "─" * 40
    text = "\n".join(lines)
    assert "Conversation Summary" in text and "Goals" in text and "ship it" in text and "**" not in text
    assert "Press Enter or Esc to close" in text and all(len(line) <= 40 for line in lines)
    panel.handle_input("x")
    panel.handle_input("\r")
    assert closed == [None]


def test_conversation_text_skips_tool_results() -> None:
    entries = [{"type": "message", "message": {"role": "user", "content": "q"}},
               {"type": "message", "message": {"role": "toolResult", "content": [{"type": "text", "text": "out"}]}},
               {"type": "model_change"},
               {"type": "message", "message": {"role": "assistant", "content": [{"type": "text", "text": " a "}]}}]
    assert conversation_text(session_entries(*entries)) == "User: q\n\nAssistant: a"
