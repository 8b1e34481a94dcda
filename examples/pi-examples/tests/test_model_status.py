"""model_status: every model change (RPC set_model, cycle_model) gives a notice and the footer status."""

from __future__ import annotations

from typing import Any


def ui_requests(client: Any, method: str) -> list[dict[str, Any]]:
    return [e for e in client.events if e.get("type") == "extension_ui_request" and e["method"] == method]


def test_set_and_cycle_model_notify_and_set_the_status(example) -> None:
    example.add_model("fake-model-2")
    client = example.rpc("model_status", "--no-session")
    assert client.get_state()["model"]["id"] == "fake-model"
    assert ui_requests(client, "notify") == [], "no notice at start-up: the model did not change"
    client.set_model("fake", "fake-model-2")
    client.wait_for_event(lambda e: e.get("method") == "setStatus")
    assert [n["message"] for n in ui_requests(client, "notify")] == ["Model: fake/fake-model-2"]
    assert ui_requests(client, "setStatus")[-1]["statusKey"] == "model"
    assert ui_requests(client, "setStatus")[-1]["statusText"] == "🤖 fake-model-2"
    count = client.event_count()
    client.cycle_model()
    client.wait_for_event(lambda e: e.get("method") == "setStatus", after=count)
    assert ui_requests(client, "notify")[-1]["message"] == "Model: fake/fake-model"
    assert ui_requests(client, "setStatus")[-1]["statusText"] == "🤖 fake-model"

