"""The provider transport through the real ``pi`` command, on every wire.

Issue items: 17.3 (invalid UTF-8 from the provider is decoded with replacement), 17.11 (idle timeout,
the ``httpIdleTimeoutMs`` setting), 16.14 (Anthropic ``x-api-key`` and ``anthropic-version``), 16.17
(``prompt_cache_key`` under ``--no-session``), 20 (Google obeys ``x-should-retry: false``; a refused
loopback connection fails fast; every provider error names the provider and the URL).
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from pi_core.testing.fake_server import Reply
from pi_core.testing.fake_wires import WIRES
from pi_core.testing.pi_home import write_models
from pi_core.testing.runner import PiRunner, pi_runner

PATHS = {"anthropic-messages": "/v1/messages", "openai-completions": "/v1/chat/completions",
         "openai-responses": "/v1/responses",
         "google-generative-ai": "/v1beta/models/fake-model:streamGenerateContent"}


@pytest.fixture(params=WIRES)
def pi(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[PiRunner]:
    with pi_runner(tmp_path, request.param) as runner:
        yield runner


def json_events(stdout: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]


def test_invalid_utf8_from_the_provider_is_replaced(pi: PiRunner) -> None:
    pi.server.add(Reply(text="caf\ufffd au lait", invalid_utf8=True))
    done = pi.run("--no-session", "-p", "hi")
    assert (done.returncode, done.stdout.strip()) == (0, "caf\ufffd au lait"), done.stderr


def test_a_trickling_stream_ends_at_the_idle_timeout_setting(pi: PiRunner) -> None:
    pi.settings("httpIdleTimeoutMs = 400\n[retry]\nenabled = false\n")
    pi.server.add(Reply(text="partial", trickle_after="content", trickle_s=0.05))
    done = pi.run("--no-session", "-p", "hi", timeout=30)
    assert done.returncode == 1
    origin = f"[provider fake, POST {pi.server.url}{PATHS[pi.api]}]"
    assert f"Request timed out: no complete event for 0.4 s {origin}" in done.stderr


def test_every_provider_error_names_the_provider_and_url(pi: PiRunner) -> None:
    pi.server.add(Reply.http_error(400, "bad request body"))
    done = pi.run("--no-session", "-p", "hi")
    assert done.returncode == 1
    line = next(text for text in done.stderr.splitlines() if "400" in text)
    assert "bad request body" in line and line.endswith(f" [provider fake, POST {pi.server.url}{PATHS[pi.api]}]")


def test_a_refused_loopback_connection_fails_fast(pi: PiRunner) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    base = pi.server.base_url_for(pi.api).replace(str(pi.server.port), str(port))
    write_models(pi.home, base, pi.api)
    done = pi.run("--no-session", "--mode", "json", "hi")
    events = json_events(done.stdout)
    assert not [e for e in events if str(e.get("type", "")).startswith("auto_retry")]  # no 2+4+8 s ladder
    ends = [e for e in events if e.get("type") == "message_end" and (e.get("message") or {}).get("role") == "assistant"]
    error = ends[-1]["message"]["errorMessage"]  # type: ignore[index]
    assert error == (f"Connection error.: connection refused (is the local server running?) "
                     f"[provider fake, POST http://127.0.0.1:{port}{PATHS[pi.api]}]")


@pytest.mark.parametrize("should_retry,requests", [("false", 1), (None, 3)])
def test_google_honours_x_should_retry(tmp_path: Path, should_retry: str | None, requests: int) -> None:
    with pi_runner(tmp_path, "google-generative-ai") as pi:
        pi.settings("[retry]\nenabled = false\n[retry.provider]\nmaxRetries = 2\nmaxRetryDelayMs = 60000\n")
        headers = {"x-should-retry": should_retry, "retry-after-ms": "10"} if should_retry else {"retry-after-ms": "10"}
        pi.server.add(*[Reply.http_error(503, headers=headers) for _ in range(3)])
        done = pi.run("--no-session", "-p", "hi")
        assert done.returncode == 1 and len(pi.server.requests) == requests


@pytest.mark.parametrize(("setting", "requests"), [("", 1), ("[retry.provider]\nmaxRetries = 2\n", 3)])
def test_provider_retries_are_off_unless_retry_provider_max_retries_asks(tmp_path: Path, setting: str,
                                                                        requests: int) -> None:
    """Pi 1.6.0's default ``retry.provider.maxRetries`` is 0: a 503 goes straight to the agent layer (off here)."""
    with pi_runner(tmp_path, "anthropic-messages") as pi:
        pi.settings("[retry]\nenabled = false\n" + setting)
        pi.server.add(*[Reply.http_error(503, headers={"retry-after-ms": "10"}) for _ in range(3)])
        done = pi.run("--no-session", "-p", "hi")
        assert done.returncode == 1 and len(pi.server.requests) == requests, done.stderr


def anthropic_headers(tmp_path: Path, api_key: str, compat: dict[str, str] | None = None) -> dict[str, str]:
    with pi_runner(tmp_path, "anthropic-messages") as pi:
        models = json.loads((pi.home / "models.json").read_text())
        models["providers"]["fake"]["apiKey"] = api_key
        if compat:
            models["providers"]["fake"]["compat"] = compat
        (pi.home / "models.json").write_text(json.dumps(models))
        pi.server.add(Reply(text="ok"))
        done = pi.run("--no-session", "-p", "hi")
        assert done.returncode == 0, done.stderr
        return pi.server.requests[0].headers


def test_anthropic_api_keys_go_in_x_api_key_with_pis_version(tmp_path: Path) -> None:
    headers = anthropic_headers(tmp_path, "sk-ant-api03-secret")
    assert headers["x-api-key"] == "sk-ant-api03-secret" and "authorization" not in headers
    assert headers["anthropic-version"] == "2023-06-01"


def test_anthropic_version_is_configurable_per_provider(tmp_path: Path) -> None:
    headers = anthropic_headers(tmp_path, "sk-ant-api03-secret", {"anthropicVersion": "2024-01-01"})
    assert headers["anthropic-version"] == "2024-01-01"


def test_anthropic_oauth_tokens_stay_bearer(tmp_path: Path) -> None:
    headers = anthropic_headers(tmp_path, "sk-ant-oat01-token")
    assert headers["authorization"] == "Bearer sk-ant-oat01-token" and "x-api-key" not in headers


def test_responses_prompt_cache_key_under_no_session(tmp_path: Path) -> None:
    with pi_runner(tmp_path, "openai-responses") as pi:
        pi.server.add(Reply(text="one"), Reply(text="two"), Reply(text="three"))
        assert pi.run("--no-session", "-p", "first", "second").returncode == 0
        assert pi.run("--no-session", "-p", "third").returncode == 0
        keys = [request.body.get("prompt_cache_key") for request in pi.server.requests]
        assert all(keys) and keys[0] == keys[1] != keys[2]  # one id per process, stable within it
        assert pi.server.requests[0].headers["x-client-request-id"] == keys[0]
        assert pi.session_files() == []
