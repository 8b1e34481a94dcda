"""The ``mistral-conversations`` wire end to end: ``pi -p`` against the fake model server's Mistral stream."""

from __future__ import annotations

import json
from pathlib import Path

from pi_core.testing.fake_server import FakeModelServer, Reply, ToolUse
from tests.providers.pi16 import clean_env, run_pi


def setup(tmp_path: Path, server: FakeModelServer) -> dict[str, str]:
    env = clean_env(tmp_path, {"MISTRAL_API_KEY": "mistral-test-key"})
    agent = tmp_path / "agent"
    (agent / "models.json").write_text(json.dumps({"providers": {"mistral": {
        "baseUrl": server.base_url_for("mistral-conversations")}}}))
    (agent / "settings.json").write_text(json.dumps({"localServers": False, "retry": {"enabled": False}}))
    return env


def test_thinking_tool_calls_and_results_in_mistrals_shape(tmp_path: Path, pi_fake_server: FakeModelServer) -> None:
    env = setup(tmp_path, pi_fake_server)
    (tmp_path / "a.txt").write_text("alpha\n")
    pi_fake_server.add(Reply(thinking="let me look", tool_calls=[ToolUse("read", {"path": "a.txt"}, id="Ab3dE6gH9")]),
                       Reply(text="it says alpha", cache_read_tokens=4))
    done = run_pi(["-p", "--model", "mistral/magistral-medium-latest", "--thinking", "high", "read a.txt"], env,
                  tmp_path)
    assert done.returncode == 0, done.stderr
    assert "it says alpha" in done.stdout
    first, second = pi_fake_server.requests
    assert first.path == "/mistral/v1/chat/completions" and first.wire == "mistral-conversations"
    assert first.headers["authorization"] == "Bearer mistral-test-key"
    assert first.headers["x-affinity"] == first.body["prompt_cache_key"]
    assert first.body["reasoning_effort"] == "high" and "stream_options" not in first.body
    assert first.body["messages"][0]["role"] == "system"
    assert all(tool["function"]["strict"] is False for tool in first.body["tools"])
    history = second.body["messages"]
    assistant = next(m for m in history if m["role"] == "assistant")
    assert assistant["prefix"] is False
    assert assistant["content"] == [{"type": "thinking", "thinking": [{"type": "text", "text": "let me look"}]}]
    call = assistant["tool_calls"][0]
    assert call["id"] == "Ab3dE6gH9" and call["function"] == {"name": "read", "arguments": '{"path":"a.txt"}'}
    result = history[-1]
    assert (result["role"], result["name"], result["tool_call_id"]) == ("tool", "read", call["id"])
    assert result["content"][0]["text"].startswith("alpha")
    session = next((tmp_path / "agent" / "sessions").rglob("*.jsonl")).read_text()
    assert '"thinking":"let me look"' in session
    last = [json.loads(line) for line in session.splitlines() if '"assistant"' in line][-1]["message"]
    assert last["api"] == "mistral-conversations" and last["usage"]["cacheRead"] == 4


def test_a_model_without_an_effort_map_gets_prompt_mode(tmp_path: Path, pi_fake_server: FakeModelServer) -> None:
    env = setup(tmp_path, pi_fake_server)
    agent = tmp_path / "agent"
    (agent / "models.json").write_text(json.dumps({"providers": {"mistral": {
        "baseUrl": pi_fake_server.base_url_for("mistral-conversations"),
        "models": [{"id": "magistral-custom", "reasoning": True, "input": ["text"]}]}}}))
    pi_fake_server.add(Reply(text="ok"), Reply(text="ok"))
    assert run_pi(["-p", "--model", "mistral/magistral-custom", "--thinking", "medium", "hi"], env,
                  tmp_path).returncode == 0
    assert run_pi(["-p", "--model", "mistral/magistral-custom", "--thinking", "off", "hi"], env,
                  tmp_path).returncode == 0
    on, off = (r.body for r in pi_fake_server.requests)
    assert on.get("prompt_mode") == "reasoning" and "reasoning_effort" not in on
    assert "prompt_mode" not in off


def test_an_http_error_is_worded_as_mistral_does(tmp_path: Path, pi_fake_server: FakeModelServer) -> None:
    env = setup(tmp_path, pi_fake_server)
    pi_fake_server.add(Reply.http_error(401, body={"message": "Unauthorized", "request_id": "r1"}))
    done = run_pi(["-p", "--model", "mistral/mistral-large-latest", "hi"], env, tmp_path)
    assert done.returncode == 1
    assert 'Mistral API error (401): {"message": "Unauthorized", "request_id": "r1"}' in done.stdout + done.stderr


def test_a_finish_reason_of_error_is_a_retryable_server_error(tmp_path: Path, pi_fake_server: FakeModelServer,
                                                              ) -> None:
    env = setup(tmp_path, pi_fake_server)
    pi_fake_server.add(Reply(text="half", stop_reason="error"))
    done = run_pi(["-p", "--model", "mistral/mistral-large-latest", "hi"], env, tmp_path)
    assert done.returncode == 1
    assert "Provider stopped with: error (server error)" in done.stdout + done.stderr


def test_the_endpoint_from_a_root_with_or_without_v1() -> None:
    from pi_plugins.mistral_conversations.streaming import request_for

    from pi_core.providers import StreamOptions
    from pi_core.types import Model

    for base in ("https://api.mistral.ai", "https://api.mistral.ai/v1/", ""):
        model = Model(id="m", api="mistral-conversations", provider="mistral", base_url=base)
        assert request_for(model, StreamOptions(), "k", {}).url == "https://api.mistral.ai/v1/chat/completions"
