"""debug_provider: while on, each reply's raw wire events are kept as a session entry; off keeps nothing."""

from __future__ import annotations

import json

from pi_examples.debug_provider import render_entry

from pi_core.hookspecs.entries import CustomEntry, entry_from_json
from pi_core.render import RenderOptions
from pi_core.testing.fake_script import Reply


def debug_entries(client) -> list[dict]:
    with open(client.get_state()["sessionFile"], encoding="utf-8") as lines:
        entries = [json.loads(line) for line in lines if line.strip()]
    return [e for e in entries if e.get("type") == "custom" and e.get("customType") == "debug-provider-events"]


def test_capture_on_keeps_the_raw_events_and_off_stops(example) -> None:
    example.server.add(Reply(text="one"), Reply(text="two"))
    client = example.rpc("debug_provider")
    client.request("prompt", message="/debug-provider on")
    client.prompt_and_wait("hi")
    captured = debug_entries(client)
    assert len(captured) == 1
    data = captured[0]["data"]
    assert (data["provider"], data["model"], data["api"]) == ("fake", "fake-model", "anthropic-messages")
    types = [event.get("type") for event in data["events"]]
    assert types[0] == "message_start" and types[-1] == "message_stop"
    assert any(e.get("delta", {}).get("text") for e in data["events"] if e.get("type") == "content_block_delta")
    client.request("prompt", message="/debug-provider off")
    client.prompt_and_wait("again")
    assert len(debug_entries(client)) == 1
    client.request("prompt", message="/debug-provider sideways")
    client.wait_for_event(lambda e: e.get("message") == "Usage: /debug-provider [on|off]")
    statuses = [(s["statusKey"], s.get("statusText")) for s in example.ui_requests(client, "setStatus")]
    assert statuses == [("debug-provider", "provider debug"), ("debug-provider", None)]
    assert [(n["message"], n.get("notifyType")) for n in example.ui_requests(client, "notify")] == [
        ("Provider event capture enabled", "info"), ("Provider event capture disabled", "info"),
        ("Usage: /debug-provider [on|off]", "warning")]


def test_entry_renderer_summarises_and_expands() -> None:
    entry = entry_from_json({"type": "custom", "id": "e1", "customType": "debug-provider-events",
                             "data": {"provider": "fake", "model": "fake-model", "api": "anthropic-messages",
                                      "events": [{"type": "message_start"}, {"type": "message_stop"}]}})
    collapsed = render_entry(entry, RenderOptions(expanded=False), None).plain
    assert collapsed == "[provider debug] fake/fake-model (anthropic-messages) · 2 events (ctrl+o to view events)"
    expanded = render_entry(entry, RenderOptions(expanded=True), None).plain
    assert expanded.split("\n", 1)[1] == json.dumps(entry.data["events"], indent=2)
    assert render_entry(CustomEntry(id="e2", custom_type="debug-provider-events"), RenderOptions(), None).plain == "[provider debug] Missing event data"
