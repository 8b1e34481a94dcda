"""GitHub Copilot's per-request headers and Bearer auth on each of its wires, and ``ANTHROPIC_AUTH_TOKEN``
as an ``Authorization: Bearer`` header, end to end through ``pi -p`` against the fake model server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pi_core.testing.fake_server import FakeModelServer, Reply
from tests.providers.pi16 import clean_env, run_pi, run_pi_here


def route(tmp_path: Path, provider: str, base: str) -> None:
    (tmp_path / "agent" / "models.json").write_text(json.dumps({"providers": {provider: {"baseUrl": base}}}))


def png(path: Path) -> Path:
    from PIL import Image

    Image.new("RGB", (4, 4), (200, 10, 10)).save(path)
    return path


@pytest.mark.parametrize("model", ["claude-sonnet-4.6", "gemini-4-neon", "gpt-5.4-nano"])
def test_copilot_marks_user_and_agent_turns_and_images(tmp_path: Path, pi_fake_server: FakeModelServer,
                                                      model: str) -> None:
    env = clean_env(tmp_path, {"COPILOT_GITHUB_TOKEN": "ghu_copilot_token_123"})
    route(tmp_path, "github-copilot", pi_fake_server.url + "/v1")
    (tmp_path / "a.txt").write_text("alpha\n")
    pi_fake_server.add(Reply(tool_calls=[("read", {"path": "a.txt"})]), Reply(text="read it"))
    image = png(tmp_path / "red.png")
    done = run_pi(["-p", "--model", f"github-copilot/{model}", f"@{image}", "what is in a.txt?"], env, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "read it" in done.stdout
    first, second = pi_fake_server.requests
    for sent in (first, second):
        assert sent.headers["authorization"] == "Bearer ghu_copilot_token_123"
        assert "x-api-key" not in sent.headers
        assert sent.headers["openai-intent"] == "conversation-edits"
        assert sent.headers["copilot-vision-request"] == "true"
        assert sent.headers["copilot-integration-id"] == "vscode-chat"
    assert (first.headers["x-initiator"], second.headers["x-initiator"]) == ("user", "agent")


def test_copilot_without_images_sends_no_vision_header(tmp_path: Path, pi_fake_server: FakeModelServer) -> None:
    env = clean_env(tmp_path, {"COPILOT_GITHUB_TOKEN": "ghu_copilot_token_123"})
    route(tmp_path, "github-copilot", pi_fake_server.url + "/v1")
    pi_fake_server.add(Reply(text="hi"))
    done = run_pi(["-p", "--model", "github-copilot/gpt-5.4-nano", "hello"], env, tmp_path)
    assert done.returncode == 0, done.stderr
    sent = pi_fake_server.requests[0]
    assert sent.headers["x-initiator"] == "user" and "copilot-vision-request" not in sent.headers


def test_other_providers_get_no_copilot_headers(tmp_path: Path, pi_fake_server: FakeModelServer) -> None:
    env = clean_env(tmp_path, {"OPENAI_API_KEY": "sk-test"})
    route(tmp_path, "openai", pi_fake_server.url + "/v1")
    pi_fake_server.add(Reply(text="hi"))
    assert run_pi(["-p", "--model", "openai/gpt-5.4-nano", "hello"], env, tmp_path).returncode == 0
    headers = pi_fake_server.requests[0].headers
    assert not {"x-initiator", "openai-intent", "copilot-vision-request"} & set(headers)


def test_anthropic_auth_token_is_a_bearer_header_and_wins_over_the_api_key(
        tmp_path: Path, pi_fake_server: FakeModelServer) -> None:
    env = clean_env(tmp_path, {"ANTHROPIC_AUTH_TOKEN": "gateway-token-42", "ANTHROPIC_API_KEY": "sk-ant-api-key"})
    route(tmp_path, "anthropic", pi_fake_server.url)
    pi_fake_server.add(Reply(text="through the gateway"))
    listed = run_pi_here(["--list-models", "claude-sonnet-4-6"],
                         clean_env(tmp_path, {"ANTHROPIC_AUTH_TOKEN": "t"}), tmp_path)
    assert "claude-sonnet-4-6" in listed.stdout  # the token alone makes Anthropic's models available
    done = run_pi(["-p", "--model", "anthropic/claude-sonnet-4-6", "hi"], env, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "through the gateway" in done.stdout
    sent = pi_fake_server.requests[0]
    assert sent.headers["authorization"] == "Bearer gateway-token-42"
    assert "x-api-key" not in sent.headers
    assert "oauth-2025-04-20" not in sent.headers.get("anthropic-beta", "")  # not a Claude subscription


def test_a_stored_key_wins_over_anthropic_auth_token(tmp_path: Path, pi_fake_server: FakeModelServer) -> None:
    env = clean_env(tmp_path, {"ANTHROPIC_AUTH_TOKEN": "gateway-token-42"})
    route(tmp_path, "anthropic", pi_fake_server.url)
    auth = tmp_path / "agent" / "auth.json"
    auth.write_text(json.dumps({"anthropic": {"type": "api_key", "key": "sk-ant-stored"}}))
    auth.chmod(0o600)
    pi_fake_server.add(Reply(text="ok"))
    assert run_pi(["-p", "--model", "anthropic/claude-sonnet-4-6", "hi"], env, tmp_path).returncode == 0
    sent = pi_fake_server.requests[0]
    assert sent.headers["x-api-key"] == "sk-ant-stored" and "authorization" not in sent.headers
