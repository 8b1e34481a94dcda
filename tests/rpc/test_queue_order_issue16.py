"""Issue 16 item 16: ``queue_update`` (the queue shrinking) comes before the delivered steering message's
``message_start``, as in Pi (the same events JSON mode prints)."""

from __future__ import annotations

from pi_core.testing.fake_provider import reply

from .conftest import Rig


def test_queue_update_comes_before_the_steering_message(rig: Rig) -> None:
    client = rig.start(reply(tool_calls=[("gate", {"value": "a"})]), reply("steered"))
    start = client.event_count()
    client.prompt("go")
    client.wait_for_event("tool_execution_start", after=start)
    client.steer("change course")
    client.wait_for_event(lambda e: e.get("type") == "queue_update" and e["steering"] == ["change course"],
                          after=start)
    rig.gate.release.set()
    client.wait_for_event("agent_end", after=start)
    events = client.events[start:]
    delivered = next(i for i, e in enumerate(events) if e["type"] == "message_start"
                     and e["message"]["role"] == "user" and e["message"]["content"][0]["text"] == "change course")
    emptied = next(i for i, e in enumerate(events) if e["type"] == "queue_update" and e["steering"] == [])
    assert emptied < delivered
