"""Issue 16 item 15: an unknown command's response echoes the request id, and Pi 1.6.0's additions:
prompt/steer/follow_up dispositions, clear_queue, get_available_thinking_levels, get_entries,
get_tree and the agent_settled event."""

from __future__ import annotations

import types

from pi_core import SlashCommand
from pi_core.hookspecs import hookimpl
from pi_core.testing.fake_provider import reply

from .conftest import FAKE_REASONING, Rig


def test_unknown_command_echoes_the_id(rig: Rig) -> None:
    client = rig.start()
    response = client.send({"id": "req-9", "type": "no_such_command"})
    assert response == {"id": "req-9", "type": "response", "command": "no_such_command", "success": False,
                        "error": "Unknown command: no_such_command"}


def test_dispositions_queue_clearing_and_settling(rig: Rig) -> None:
    plugin = types.SimpleNamespace(pi_commands=hookimpl(lambda: [
        SlashCommand(name="hello", description="Say hello", handler=lambda args, ctx: None)]))
    client = rig.start(reply(tool_calls=[("gate", {"value": "a"})]), reply("done"),
                       plugin_modules={"hello": plugin})
    start = client.event_count()
    started = client.send({"id": "p1", "type": "prompt", "message": "go"})
    assert started["data"] == {"disposition": "started"}
    client.wait_for_event("tool_execution_start", after=start)
    assert client.send({"id": "s", "type": "steer", "message": "steer me"})["data"] == {"disposition": "queued"}
    assert client.send({"id": "f", "type": "follow_up", "message": "follow me"})["data"] == {"disposition": "queued"}
    queued = client.send({"id": "p2", "type": "prompt", "message": "later", "streamingBehavior": "followUp"})
    assert queued["data"] == {"disposition": "queued"}
    handled = client.send({"id": "p3", "type": "prompt", "message": "/hello"})
    assert handled["data"] == {"disposition": "handled"}

    cleared = client.send({"id": "c", "type": "clear_queue"})
    assert cleared["data"] == {"steering": ["steer me"], "followUp": ["follow me", "later"]}
    client.wait_for_event(lambda e: e.get("type") == "queue_update" and e["steering"] == [] and e["followUp"] == [],
                          after=start)
    assert client.get_state()["pendingMessageCount"] == 0

    rig.gate.release.set()
    settled = client.wait_for_event("agent_settled", after=start)
    assert settled == {"type": "agent_settled", "aborted": False}
    kinds = [e["type"] for e in client.events[start:]]
    assert kinds.index("agent_settled") > max(i for i, k in enumerate(kinds) if k == "agent_end")
    assert len(rig.provider.contexts) == 2  # the cleared messages were never sent

    # an aborted run settles with aborted: true
    rig.gate.release.clear()
    rig.provider.replies[:] = [reply(tool_calls=[("gate", {"value": "b"})])]
    start = client.event_count()
    client.prompt("again")
    client.wait_for_event("tool_execution_start", after=start)
    client.abort()
    assert client.wait_for_event("agent_settled", after=start) == {"type": "agent_settled", "aborted": True}


def test_available_thinking_levels_follow_the_model(rig: Rig) -> None:
    client = rig.start()
    assert client.request("get_available_thinking_levels") == {"levels": ["off"]}
    client.set_model(FAKE_REASONING.provider, FAKE_REASONING.id)
    assert client.request("get_available_thinking_levels") == {"levels": ["off", "minimal", "low", "medium", "high"]}


def test_entries_with_a_cursor_and_the_tree_with_labels(rig: Rig) -> None:
    client = rig.start(reply("one"), reply("two"))
    client.prompt_and_wait("first")
    everything = client.request("get_entries")
    entries = everything["entries"]
    assert entries and all("id" in e for e in entries) and entries[0].get("type") != "session"
    assert everything["leafId"] == entries[-1]["id"]
    cursor = entries[-1]["id"]
    assert client.request("get_entries", since=cursor) == {"entries": [], "leafId": cursor}

    client.prompt_and_wait("second")
    newer = client.request("get_entries", since=cursor)["entries"]
    assert [e["message"]["role"] for e in newer if e["type"] == "message"] == ["user", "assistant"]
    missing = client.send({"id": "x", "type": "get_entries", "since": "nope"})
    assert missing["success"] is False and missing["error"] == "Entry not found: nope" and missing["id"] == "x"

    first_user = next(e for e in entries if e["type"] == "message" and e["message"]["role"] == "user")
    rig.pi.session.store.append_label_change(first_user["id"], "start here")
    data = client.request("get_tree")
    assert data["leafId"] == client.request("get_entries")["leafId"]
    ids, labelled, stack = [], {}, list(data["tree"])
    while stack:
        node = stack.pop()
        ids.append(node["entry"]["id"])
        if "label" in node:
            labelled[node["entry"]["id"]] = (node["label"], "labelTimestamp" in node)
        stack.extend(node["children"])
    assert sorted(ids) == sorted(e["id"] for e in client.request("get_entries")["entries"])
    assert labelled == {first_user["id"]: ("start here", True)}
