"""session_name: /session-name sets the display name (state and event follow) and shows it back."""

from __future__ import annotations


def test_set_then_show_the_session_name(example, ui) -> None:
    client = example.rpc("session_name")
    mark = client.event_count()
    client.prompt("/session-name")
    assert ui(client, "notify", after=mark)["message"] == "No session name set"

    mark = client.event_count()
    client.prompt("/session-name  Refactor auth ")
    assert ui(client, "notify", after=mark)["message"] == "Session named: Refactor auth"
    changed = client.wait_for_event("session_info_changed", after=mark, timeout=30)
    assert changed["name"] == "Refactor auth"
    assert client.get_state()["sessionName"] == "Refactor auth"

    mark = client.event_count()
    client.prompt("/session-name")
    assert ui(client, "notify", after=mark)["message"] == "Session: Refactor auth"
    assert not example.server.requests  # commands never reach the model
