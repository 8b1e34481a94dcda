"""ChatView: session events in, committed and live renderables out (drawn on a recording console)."""

from __future__ import annotations

import io
from typing import Any

from pi_plugins.interactive.renderers import resolve_renderers
from pi_plugins.interactive.view import ChatView
from rich.console import Console

from pi_core.events import AgentEvent
from pi_core.tools import ToolResult
from pi_core.types import (
    AssistantMessage,
    TextContent,
    ThinkingContent,
    ToolCall,
    UserMessage,
)


def text_of(renderable: Any) -> str:
    console = Console(record=True, file=io.StringIO(), width=80, color_system=None)
    console.print(renderable)
    return "\n".join(line.rstrip() for line in console.export_text().splitlines())


class Recorder:
    def __init__(self) -> None:
        self.committed: list[str] = []
        self.view = ChatView(resolve_renderers({}), lambda r: self.committed.append(text_of(r)))

    def send(self, type: str, **fields: Any) -> None:
        self.view.handle(AgentEvent(type, **fields))

    def live(self) -> str:
        live = self.view.live()
        return text_of(live) if live is not None else ""


def assistant(*blocks: Any, stop: str = "stop", error: str | None = None) -> AssistantMessage:
    return AssistantMessage(content=list(blocks), stop_reason=stop, error_message=error)  # type: ignore[arg-type]


def test_streaming_reply_is_live_then_committed_as_markdown() -> None:
    rec = Recorder()
    rec.send("message_start", message=UserMessage(content="hello"))
    partial = assistant(TextContent(text="# Title\n\nSome `code` and"))
    rec.send("message_start", message=partial)
    rec.send("message_update", message=partial)
    assert "Title" in rec.live() and "# Title" not in rec.live()  # rendered, not raw Markdown
    final = assistant(TextContent(text="# Title\n\nSome `code` and more.\n\n```python\nx = 1\n```"))
    rec.send("message_end", message=final)
    assert rec.live() == ""
    assert rec.committed[0].strip() == "hello"
    assert "Some code and more." in rec.committed[1] and "x = 1" in rec.committed[1]


def test_thinking_is_shown_dimmed_or_collapsed() -> None:
    rec = Recorder()
    message = assistant(ThinkingContent(thinking="pondering deeply"), TextContent(text="answer"))
    rec.send("message_start", message=message)
    assert "pondering deeply" in rec.live()
    rec.view.show_thinking = False
    assert "pondering" not in rec.live() and "Thinking… (ctrl+t to show)" in rec.live()
    rec.send("message_end", message=message)
    assert "answer" in rec.committed[-1] and "pondering" not in rec.committed[-1]


def test_tool_results_are_committed_in_call_order() -> None:
    rec = Recorder()
    calls = [ToolCall(id="a", name="bash", arguments={"command": "first"}),
             ToolCall(id="b", name="bash", arguments={"command": "second"})]
    rec.send("message_end", message=assistant(*calls, stop="toolUse"))
    for call in calls:
        rec.send("tool_execution_start", tool_call_id=call.id, tool_name="bash", args=call.arguments)
    rec.send("tool_execution_update", tool_call_id="a", tool_name="bash", args={},
             partial_result=ToolResult.text("partial output"))
    assert "$ first" in rec.live() and "partial output" in rec.live() and "$ second" in rec.live()
    rec.send("tool_execution_end", tool_call_id="b", tool_name="bash", result=ToolResult.text("two"), is_error=False)
    assert rec.committed == []  # b waits for a, so the scrollback keeps the assistant's order
    rec.send("tool_execution_end", tool_call_id="a", tool_name="bash", result=ToolResult.text("one"), is_error=False)
    assert [c.split("\n")[0].strip() for c in rec.committed] == ["$ first", "$ second"]
    assert rec.live() == ""


def test_errors_aborts_and_queue_are_shown() -> None:
    rec = Recorder()
    rec.send("message_end", message=assistant(stop="error", error="rate limited"))
    rec.send("message_end", message=assistant(TextContent(text="partial"), stop="aborted"))
    assert rec.committed[0] == "Error: rate limited"
    assert rec.committed[-1] == "Operation aborted"
    rec.send("queue_update", steering=["also this"], follow_up=["and later that"])
    assert "Steering: also this" in rec.live() and "Follow-up: and later that" in rec.live()
    rec.send("auto_retry_start", attempt=1, max_attempts=3, delay_ms=2000, error_message="overloaded")
    assert "Retrying (1/3) in 2s… overloaded" in rec.live()


def test_long_streaming_reply_shows_its_tail_without_breaking_code_blocks() -> None:
    from pi_plugins.interactive.view import live_tail

    prose = "\n\n".join(f"Paragraph {i} " + "word " * 40 for i in range(100))
    tail = live_tail(prose, 2000)
    assert len(tail) <= 2100 and tail.startswith("Paragraph") and prose.endswith(tail)
    code = prose + "\n\n```python\n" + "\n\n".join(f"x{i} = {i}" for i in range(400)) + "\n"
    tail = live_tail(code, 2000)
    assert tail.startswith("```python\nx")  # the fence is reopened, so the code still renders as code
    assert len(tail) < 2100 and code.endswith(tail.removeprefix("```python\n"))
    assert live_tail("short") == "short"
    rec = Recorder()
    message = assistant(TextContent(text=prose))
    rec.send("message_start", message=message)
    assert "Paragraph 99" in rec.live() and "Paragraph 0 " not in rec.live()
    rec.send("message_end", message=message)
    assert "Paragraph 0 " in rec.committed[-1] and "Paragraph 99" in rec.committed[-1]


def test_queued_messages_without_text_get_no_row() -> None:
    rec = Recorder()
    rec.send("queue_update", steering=[""], follow_up=["", "and later that"])
    assert "Follow-up: and later that" in rec.live() and "Steering:" not in rec.live()
    assert rec.live().count("Follow-up:") == 1
    rec.send("queue_update", steering=[], follow_up=["", ""])  # custom messages only: nothing to show, as Pi
    assert not rec.view.has_live()


def test_a_custom_message_without_a_renderer_is_markdown_under_its_type() -> None:
    import types

    from pi_plugins.interactive.custom_render import CustomRenderers

    from pi_core.types import CustomMessage

    plugins = types.SimpleNamespace(call_sync=lambda hook: [])
    renderers = CustomRenderers(types.SimpleNamespace(plugins=plugins), lambda: None, lambda: 80)
    drawn = text_of(renderers.message(CustomMessage(role="custom", customType="plan", content="**Plan Steps (2):**",
                                                    display=True), False))
    assert "[plan]" in drawn and "Plan Steps (2):" in drawn and "**" not in drawn
