"""event_bus: notices for the start-up event, for ``/emit`` and for another plugin's event; a raising
subscriber is an extension error naming its plugin."""

from __future__ import annotations

from pathlib import Path
from typing import Any

OTHER = '''
from pi_core import hookimpl
from pi_core import SlashCommand


def boom(data):
    raise RuntimeError("listener broke")


def shout(args, ctx):
    ctx.events.emit("my:notification", {"message": args, "from": "other-plugin"})


@hookimpl
def pi_event_handlers():
    return {"my:notification": boom}


@hookimpl
def pi_commands():
    return [SlashCommand("shout", "Emit from another plugin", shout)]
'''


def notices(client: Any) -> list[str]:
    return [e["message"] for e in client.events if e.get("method") == "notify"]


def test_events_reach_the_listener_from_every_emitter(example, tmp_path: Path) -> None:
    other = tmp_path / "other_plugin.py"
    other.write_text(OTHER)
    client = example.rpc("event_bus", "--no-session", "-e", str(other))
    client.wait_for_event(lambda e: e.get("method") == "notify")
    assert notices(client) == ["Event from event-bus-example: Session started"]
    client.prompt("/emit hi there")
    client.wait_for_event(lambda e: e.get("message") == "Event from /emit command: hi there")
    client.prompt("/shout ping")
    client.wait_for_event(lambda e: e.get("message") == "Event from other-plugin: ping")
    client.prompt("/emit")
    client.wait_for_event(lambda e: e.get("message") == "Event from /emit command: hello")
    errors = [e for e in client.events if e.get("type") == "extension_error"]
    assert errors, "the raising subscriber of the other plugin is reported"
    assert all(e["event"] == "events:my:notification" and "listener broke" in e["error"] for e in errors)
    assert all("other_plugin" in e["extensionPath"] for e in errors)
    assert example.server.requests == [], "commands never reach the model"
