"""Prompting over RPC in-process: responses, events, steering, follow-ups, abort, EOF, big and odd inputs."""

from __future__ import annotations

import json
from typing import Any

from pi_core.testing.fake_provider import reply
from tests.rpc.conftest import Rig


def entries(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").split("\n") if line]


def test_prompt_answers_success_before_agent_start_and_persists(rig: Rig) -> None:
    client = rig.start(reply("hello there"))
    events = client.prompt_and_wait("Say hello")
    response = next(r for r in client.responses if r["command"] == "prompt")
    assert response == {"id": response["id"], "type": "response", "command": "prompt", "success": True,
                        "data": {"disposition": "started"}}
    assert events[0]["type"] == "agent_start" and events[-1]["type"] == "agent_end"
    assert client.received.index(response) < client.received.index(events[0])
    assert sum(1 for e in events if e["type"] == "message_end") >= 2
    assert any(e["type"] == "message_update" and e["assistantMessageEvent"]["type"] == "text_delta"
               for e in events)
    assert all("id" not in e for e in events)
    files = rig.session_files()
    assert len(files) == 1
    records = entries(files[0])
    assert records[0]["type"] == "session"
    roles = [r["message"]["role"] for r in records if r["type"] == "message"]
    assert "user" in roles and "assistant" in roles
    assert client.get_last_assistant_text() == "hello there"


def test_prompt_with_images_sends_them_after_the_text(rig: Rig) -> None:
    client = rig.start(reply("I see it"))
    image = {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}
    client.prompt_and_wait("What is this?", images=[image])
    content = rig.provider.contexts[0].messages[-1].content
    assert [block.type for block in content] == ["text", "image"]
    assert content[1].data == "iVBORw0KGgo=" and content[1].mime_type == "image/png"


def test_prompt_while_streaming_without_behavior_is_the_single_error(rig: Rig) -> None:
    client = rig.start(reply(tool_calls=[("gate", {"value": "a"})]), reply("done"))
    client.prompt("start")
    assert rig.gate.started.wait(30)
    response = client.send({"id": "second", "type": "prompt", "message": "again"})
    assert response == {"id": "second", "type": "response", "command": "prompt", "success": False,
                        "error": "Agent is already processing. Specify streamingBehavior ('steer' or "
                                 "'followUp') to queue the message."}
    rig.gate.release.set()
    client.wait_for_event("agent_end")
    assert [r for r in client.responses if r.get("id") == "second"] == [response]


def test_steer_during_tool_reaches_next_request_after_the_tool_results(rig: Rig) -> None:
    client = rig.start(reply(tool_calls=[("gate", {"value": "a"}), ("gate", {"value": "b"})]), reply("ok"))
    client.prompt("run both")
    assert rig.gate.started.wait(30)
    client.prompt("Stop, do this instead", streaming_behavior="steer")
    update = client.wait_for_event("queue_update")
    assert update["steering"] == ["Stop, do this instead"] and update["followUp"] == []
    assert client.get_state()["pendingMessageCount"] == 1
    rig.gate.release.set()
    client.wait_for_event("agent_end")
    second = rig.provider.contexts[1].messages
    assert [m.role for m in second[-3:]] == ["toolResult", "toolResult", "user"]
    assert second[-1].text() == "Stop, do this instead"
    assert rig.gate.calls == ["a", "b"]


def test_follow_up_is_delivered_when_the_agent_would_stop(rig: Rig) -> None:
    client = rig.start(reply(tool_calls=[("gate", {"value": "a"})]), reply("first done"), reply("second done"))
    client.prompt("go")
    assert rig.gate.started.wait(30)
    client.follow_up("Then run the tests")
    rig.gate.release.set()
    end = client.wait_for_event("agent_end")
    assert len(rig.provider.contexts) == 3
    assert rig.provider.contexts[2].messages[-1].text() == "Then run the tests"
    assert end["messages"][-1]["content"][0]["text"] == "second done"


def test_abort_during_tool_ends_run_without_another_request(rig: Rig) -> None:
    client = rig.start(reply(tool_calls=[("gate", {"value": "a"})]), reply("never sent"))
    client.prompt("go")
    assert rig.gate.started.wait(30)
    client.abort()
    end = client.wait_for_event("tool_execution_end")
    assert end["isError"] is True
    client.wait_for_event("agent_end")
    assert [r.text() for r in rig.provider.replies] == ["never sent"]  # no reply was consumed after the abort
    state = client.get_state()
    assert state["isStreaming"] is False


def test_eof_mid_run_aborts_records_and_exits_zero(rig: Rig) -> None:
    client = rig.start(reply(tool_calls=[("gate", {"value": "a"})]), reply("never sent"))
    client.prompt("go")
    assert rig.gate.started.wait(30)
    client.close_stdin()
    client.wait_closed()
    assert rig.pi.close() == 0
    assert [r.text() for r in rig.provider.replies] == ["never sent"]
    records = entries(rig.session_files()[0])
    results = [r["message"] for r in records if r["type"] == "message" and r["message"]["role"] == "toolResult"]
    assert len(results) == 1 and results[0]["isError"] is True


def test_eof_when_idle_exits_zero(rig: Rig) -> None:
    client = rig.start()
    assert client.get_state()["isStreaming"] is False
    client.close_stdin()
    assert rig.pi.close() == 0


def test_one_megabyte_prompt_arrives_intact(rig: Rig) -> None:
    client = rig.start(reply("big"))
    text = ("0123456789abcdef" * 65536)[:1_000_000] + "END"
    client.prompt_and_wait(text)
    assert rig.provider.contexts[0].messages[-1].text() == text


def test_prompt_with_unicode_line_separators_stays_one_command(rig: Rig) -> None:
    client = rig.start(reply("ok \u2028 back"))
    text = "line one\u2028line two\u2029para\rcr"
    client.prompt_and_wait(text)
    assert rig.provider.contexts[0].messages[-1].text() == text
    assert client.get_last_assistant_text() == "ok \u2028 back"
    assert not client.unparsed
    assert not any(r["command"] == "parse" for r in client.responses)


def test_prompt_without_model_is_rejected(rig: Rig) -> None:
    client = rig.start(model=None)
    response = client.send({"id": "p", "type": "prompt", "message": "hi"})
    assert response["success"] is False and response["id"] == "p"
    assert response["error"].startswith("No model selected.")
    assert rig.provider.contexts == []


def test_abort_retry_cancels_the_backoff(rig: Rig) -> None:
    from pi_core.app.settings_schema import RetryTable

    def setup(session: Any) -> None:
        session.retry = RetryTable(enabled=True, max_retries=3, base_delay_ms=600_000, max_agent_delay_ms=600_000)

    client = rig.start(reply(error="529 overloaded_error: Overloaded"), reply("never"), setup=setup)
    client.prompt("hi")
    start = client.wait_for_event("auto_retry_start")
    assert start["attempt"] == 1 and start["delayMs"] == 600_000
    client.abort_retry()
    end = client.wait_for_event("auto_retry_end")
    assert end == {"type": "auto_retry_end", "success": False, "attempt": 1, "finalError": "Retry cancelled"}
    assert [r.text() for r in rig.provider.replies] == ["never"]


def test_set_auto_retry_false_stops_retrying(rig: Rig) -> None:
    from pi_core.app.settings_schema import RetryTable

    def setup(session: Any) -> None:
        session.retry = RetryTable(enabled=True, max_retries=3, base_delay_ms=600_000, max_agent_delay_ms=600_000)

    client = rig.start(reply(error="529 overloaded_error: Overloaded"), setup=setup)
    client.set_auto_retry(False)
    client.prompt_and_wait("hi")
    assert not any(e["type"].startswith("auto_retry") for e in client.events)
