"""The ``pi-messages`` wire (Radius) end to end: ``pi -p`` with ``RADIUS_API_KEY`` against the fake model server."""

from __future__ import annotations

import json
from pathlib import Path

from pi_core.testing.fake_server import FakeModelServer, Reply
from tests.providers.pi16 import clean_env, run_pi, run_pi_here


def setup(tmp_path: Path, server: FakeModelServer) -> dict[str, str]:
    env = clean_env(tmp_path, {"RADIUS_API_KEY": "radius-test-key"})
    agent = tmp_path / "agent"
    (agent / "models.json").write_text(json.dumps({"providers": {"radius": {"baseUrl": server.url + "/v1"}}}))
    (agent / "settings.json").write_text(json.dumps({"localServers": False,
                                                    "retry": {"enabled": False, "provider": {"maxRetries": 0}}}))
    return env


def test_the_context_goes_out_as_pis_json_and_events_come_back(tmp_path: Path, pi_fake_server: FakeModelServer,
                                                               ) -> None:
    env = setup(tmp_path, pi_fake_server)
    (tmp_path / "a.txt").write_text("alpha\n")
    pi_fake_server.add(Reply(thinking="plan", tool_calls=[("read", {"path": "a.txt"})]),
                       Reply(text="radius read alpha", input_tokens=7, output_tokens=3))
    listed = run_pi_here(["--list-models", "radius"], env, tmp_path)
    assert "balanced" in listed.stdout
    done = run_pi(["-p", "--model", "radius/balanced", "--thinking", "high", "read a.txt"], env, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "radius read alpha" in done.stdout
    first, second = pi_fake_server.requests
    assert first.path == "/v1/messages" and first.wire == "pi-messages"
    assert first.headers["authorization"] == "Bearer radius-test-key"
    assert first.body["model"] == "balanced"
    assert first.body["options"]["reasoning"] == "high" and first.body["options"]["sessionId"]
    assert first.body["context"]["systemPrompt"] and first.body["context"]["tools"]
    assert first.body["context"]["messages"][0]["role"] == "user"
    replayed = second.body["context"]["messages"]
    assistant = next(m for m in replayed if m["role"] == "assistant")
    assert assistant["content"][0] == {"type": "thinking", "thinking": "plan", "thinkingSignature":
                                       "fake-thinking-signature"}
    assert assistant["content"][1]["type"] == "toolCall" and assistant["content"][1]["arguments"] == {"path": "a.txt"}
    assert replayed[-1]["role"] == "toolResult" and replayed[-1]["content"][0]["text"].startswith("alpha")
    session = [json.loads(line) for line in next((tmp_path / "agent" / "sessions").rglob("*.jsonl")).read_text()
               .splitlines()]
    answer = [e["message"] for e in session if e.get("message", {}).get("role") == "assistant"][-1]
    assert (answer["api"], answer["usage"]["input"], answer["usage"]["output"]) == ("pi-messages", 7, 3)


def test_a_backend_error_event_and_an_http_error(tmp_path: Path, pi_fake_server: FakeModelServer) -> None:
    env = setup(tmp_path, pi_fake_server)
    pi_fake_server.add(Reply(text="half", stream_error="error", error_message="upstream quota spent"),
                       Reply.http_error(403, "Model disabled by your organization", error_type="model_disabled"))
    failed = run_pi(["-p", "--model", "radius/balanced", "hi"], env, tmp_path)
    assert failed.returncode == 1 and "upstream quota spent" in failed.stdout + failed.stderr
    refused = run_pi(["-p", "--model", "radius/balanced", "hi"], env, tmp_path)
    assert refused.returncode == 1
    assert "403 Forbidden: Model disabled by your organization (model_disabled)" in refused.stdout + refused.stderr


def test_a_stream_that_stops_without_done_fails(tmp_path: Path, pi_fake_server: FakeModelServer) -> None:
    env = setup(tmp_path, pi_fake_server)
    pi_fake_server.add(Reply(text="never sent", empty=True))
    done = run_pi(["-p", "--model", "radius/balanced", "hi"], env, tmp_path)
    assert done.returncode == 1
    assert "radius stream ended without a terminal event" in done.stdout + done.stderr
