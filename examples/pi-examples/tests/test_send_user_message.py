"""send_user_message: plugin commands send real user messages: at once when idle, as steering or follow-up mid-run."""

from __future__ import annotations

from pi_core.testing.fake_script import Reply

GATE = ("bash", {"command": "while [ ! -f gate ]; do sleep 0.05; done; echo opened"})


def test_ask_starts_a_run_with_a_user_message(example, ui) -> None:
    example.server.add(Reply(text="4"))
    client = example.rpc("send_user_message", "--no-session")
    mark = client.event_count()
    client.prompt("/ask")
    notice = ui(client, "notify", after=mark)
    assert (notice["message"], notice["notifyType"]) == ("Usage: /ask <message>", "warning")

    mark = client.event_count()
    client.prompt("/ask what is 2+2?")
    client.wait_for_event("agent_end", after=mark, timeout=30)
    assert example.user_text(0) == "what is 2+2?"
    message = next(e["message"] for e in client.events[mark:] if e.get("type") == "message_end"
                   and e["message"]["role"] == "user")
    assert message["content"][0]["text"] == "what is 2+2?"



def test_askwith_sends_its_text_blocks_as_one_user_text(example) -> None:
    # Pi 1.6.0 joins a content list's text parts with newlines into one text block (images follow it);
    # checked against the real Pi with this example: one block "User request: x\nPlease respond concisely."
    example.server.add(Reply(text="short"))
    client = example.rpc("send_user_message", "--no-session")
    client.prompt("/askwith x")
    client.wait_for_event("agent_end", timeout=30)
    sent = example.server.requests[0].body["messages"][-1]["content"]
    assert [block["text"] for block in sent if block["type"] == "text"] == [
        "User request: x\nPlease respond concisely."]


def test_steer_and_followup_while_a_tool_runs(example, ui) -> None:
    example.server.add(Reply(tool_calls=[GATE]), Reply(text="steered"), Reply(tool_calls=[GATE]),
                       Reply(text="done"), Reply(text="followed"))
    client = example.rpc("send_user_message", "--no-session")
    client.prompt("start")
    client.wait_for_event("tool_execution_start", timeout=30)
    mark = client.event_count()
    client.prompt("/ask too soon")
    assert ui(client, "notify", after=mark)["message"] == "Agent is busy. Use /steer or /followup instead."
    client.prompt("/steer focus on tests")
    queued = client.wait_for_event(lambda e: e.get("type") == "queue_update" and e.get("steering"), after=mark,
                                   timeout=30)
    assert queued["steering"] == ["focus on tests"]
    (example.cwd / "gate").write_text("")
    client.wait_for_event("agent_end", timeout=30)
    assert example.user_text(1) == "focus on tests"
    assert example.tool_results(1) == []  # the steering message follows the tool result
    (example.cwd / "gate").unlink()

    mark = client.event_count()
    client.prompt("again")
    client.wait_for_event("tool_execution_start", after=mark, timeout=30)
    client.prompt("/followup then summarise")
    assert ui(client, "notify", after=mark)["message"] == "Follow-up queued"
    (example.cwd / "gate").write_text("")
    client.wait_for_event(lambda e: e.get("type") == "agent_end" and len(example.server.requests) >= 5,
                          after=mark, timeout=30)
    assert example.user_text(4) == "then summarise"
    assert example.user_text(3) == "again"  # the follow-up waited until the model had answered
