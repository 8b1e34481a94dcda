"""The ``openai-codex-responses`` wire (ChatGPT Plus/Pro) end to end: ``pi -p`` with a stored Codex sign-in
against the fake model server's ``/codex/responses`` endpoint, over SSE (test_codex_websocket.py: the socket)."""

from __future__ import annotations

import json
import time
from pathlib import Path

from pi_core.testing.fake_auth import ACCOUNT_ID, store_codex_sign_in
from pi_core.testing.fake_server import FakeModelServer, Reply
from tests.providers.pi16 import clean_env, run_pi


def signed_in(tmp_path: Path, server: FakeModelServer, transport: str | None = "sse") -> tuple[dict[str, str], str]:
    """A stored Codex sign-in; over SSE unless ``transport`` says otherwise (None: the default, ``auto``)."""
    env = clean_env(tmp_path, {})
    agent = tmp_path / "agent"
    token = store_codex_sign_in(agent, server.url)
    settings = {"localServers": False, "retry": {"enabled": False}, **({"transport": transport} if transport else {})}
    (agent / "settings.json").write_text(json.dumps(settings))
    return env, token


def test_a_codex_turn_carries_the_subscription_and_the_codex_body(tmp_path: Path, pi_fake_server: FakeModelServer,
                                                                  ) -> None:
    env, token = signed_in(tmp_path, pi_fake_server)
    pi_fake_server.add(Reply(thinking="consider", text="hello from codex"))
    done = run_pi(["-p", "--model", "openai-codex/gpt-5.6-sol", "--thinking", "high", "hi"], env, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "hello from codex" in done.stdout
    sent = pi_fake_server.requests[0]
    assert sent.path == "/codex/responses" and sent.wire == "openai-codex-responses"
    assert sent.headers["authorization"] == f"Bearer {token}"
    assert sent.headers["chatgpt-account-id"] == ACCOUNT_ID
    assert sent.headers["openai-beta"] == "responses=experimental" and sent.headers["originator"] == "pi"
    assert sent.headers["session-id"] == sent.headers["x-client-request-id"] == sent.body["prompt_cache_key"]
    body = sent.body
    assert (body["store"], body["stream"], body["text"], body["include"]) == (
        False, True, {"verbosity": "low"}, ["reasoning.encrypted_content"])
    assert (body["tool_choice"], body["parallel_tool_calls"]) == ("auto", True)
    assert body["reasoning"] == {"effort": "high", "summary": "auto"}
    assert body["input"][0]["role"] == "developer"  # the system prompt leads the input, no `instructions`
    assert all(tool["strict"] is None for tool in body["tools"])


def test_mid_conversation_effort_goes_in_configuration_updates(tmp_path: Path, pi_fake_server: FakeModelServer,
                                                               ) -> None:
    env, _ = signed_in(tmp_path, pi_fake_server)
    (tmp_path / "a.txt").write_text("alpha\n")
    pi_fake_server.add(Reply(tool_calls=[("read", {"path": "a.txt"})]), Reply(text="done"))
    done = run_pi(["-p", "--model", "openai-codex/gpt-6-sol", "--thinking", "low", "read a.txt"], env, tmp_path)
    assert done.returncode == 0, done.stderr
    first, second = (r.body for r in pi_fake_server.requests)
    update = {"type": "configuration_update", "reasoning": {"effort": "low"}}
    assert first["reasoning"] == {"effort": "medium", "summary": "auto"}  # fixed: the level travels in the input
    assert first["input"][-1] == update
    kinds = [item.get("type") or item.get("role") for item in second["input"]]
    call = kinds.index("function_call")
    assert second["input"][call - 1] == update  # the level the earlier answer was given, just before it
    assert second["input"][-1] == update
    session = next((tmp_path / "agent" / "sessions").rglob("*.jsonl")).read_text()
    assert '"providerThinkingLevel":"low"' in session.replace(" ", "")


def test_a_usage_limit_reads_like_chatgpt_says_it(tmp_path: Path, pi_fake_server: FakeModelServer) -> None:
    env, _ = signed_in(tmp_path, pi_fake_server)
    resets = int(time.time()) + 30 * 60
    pi_fake_server.add(Reply.http_error(429, headers={"x-should-retry": "false"}, body={"error": {
        "type": "usage_limit_reached", "message": "limit", "plan_type": "PLUS", "resets_at": resets}}))
    done = run_pi(["-p", "--model", "openai-codex/gpt-5.6-sol", "hi"], env, tmp_path)
    assert done.returncode == 1
    shown = done.stdout + done.stderr
    assert "You have hit your ChatGPT usage limit (plus plan). Try again in ~" in shown
    assert f"[provider openai-codex, POST {pi_fake_server.url}/codex/responses]" in shown


def test_an_error_event_in_the_stream_is_a_codex_error(tmp_path: Path, pi_fake_server: FakeModelServer) -> None:
    env, _ = signed_in(tmp_path, pi_fake_server)
    pi_fake_server.add(Reply(text="partial", stream_error="invalid_prompt", error_message="prompt refused by policy"))
    done = run_pi(["-p", "--model", "openai-codex/gpt-5.6-sol", "hi"], env, tmp_path)
    assert done.returncode == 1
    assert "Codex error: prompt refused by policy" in done.stdout + done.stderr


def test_without_a_sign_in_codex_asks_for_one(tmp_path: Path, pi_fake_server: FakeModelServer) -> None:
    env = clean_env(tmp_path, {})
    done = run_pi(["-p", "--model", "openai-codex/gpt-5.6-sol", "hi"], env, tmp_path)
    assert done.returncode == 1 and pi_fake_server.requests == []
    assert "No API key for provider: openai-codex. Sign in with `pi auth login openai-codex`" in done.stderr
    assert "Traceback" not in done.stderr
