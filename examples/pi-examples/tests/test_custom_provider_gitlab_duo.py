"""custom_provider_gitlab_duo: the GitLab token buys one direct-access token from a fake GitLab (reused within
its lifetime); Claude models go out on the Anthropic wire and GPT models on the Responses wire, both to the
gateway's proxy paths with the gateway's headers."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

import pytest

from pi_core.testing.fake_script import Reply


class FakeGitLab(BaseHTTPRequestHandler):
    calls: ClassVar[list[dict[str, Any]]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        FakeGitLab.calls.append({"path": self.path, "auth": self.headers["Authorization"], "body": body})
        answer = json.dumps({"token": "dat-1", "headers": {"x-gitlab-realm": "saas"}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def gitlab() -> Iterator[str]:
    FakeGitLab.calls = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeGitLab)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_direct_access_then_the_proxied_wires(example, gitlab: str) -> None:
    example.server.add(Reply(text="one"), Reply(text="two"), Reply(text="three"))
    env = {"GITLAB_TOKEN": "glpat-t", "GITLAB_URL": gitlab, "GITLAB_AI_GATEWAY_URL": example.server.url}
    client = example.rpc("custom_provider_gitlab_duo", "--no-session", "--provider", "gitlab-duo", "--model",
                         "claude-sonnet-4-5-20250929", env=env)
    client.prompt_and_wait("hi")
    client.prompt_and_wait("again")
    client.set_model("gitlab-duo", "gpt-5-mini-2025-08-07")
    client.prompt_and_wait("and with gpt")
    assert FakeGitLab.calls == [{"path": "/api/v4/ai/third_party_agents/direct_access", "auth": "Bearer glpat-t",
                                 "body": {"feature_flags": {"DuoAgentPlatformNext": True}}}], "one within the TTL"
    first, second, third = example.server.requests
    assert first.path == second.path == "/ai/v1/proxy/anthropic/v1/messages"
    assert first.headers.get("authorization") == "Bearer dat-1"
    assert first.headers.get("x-gitlab-realm") == "saas"
    assert first.body["model"] == "claude-sonnet-4-5-20250929"
    assert third.path == "/ai/v1/proxy/openai/v1/responses" and third.body["model"] == "gpt-5-mini-2025-08-07"
    assert third.headers.get("authorization") == "Bearer dat-1"
    assert client.get_last_assistant_text() == "three"


def test_without_a_token_the_user_is_told(example, gitlab: str) -> None:
    env = {"GITLAB_URL": gitlab, "GITLAB_AI_GATEWAY_URL": example.server.url, "GITLAB_TOKEN": ""}
    done = example.run("custom_provider_gitlab_duo", "--no-session", "-p", "--provider", "gitlab-duo", "--model",
                       "claude-haiku-4-5-20251001", "hi", env=env)
    assert "No GitLab access token. Run /login gitlab-duo or set " in done.stderr  # the rest: pi redacts the key
    assert "Traceback" not in done.stderr
    assert FakeGitLab.calls == [] and example.server.requests == []
