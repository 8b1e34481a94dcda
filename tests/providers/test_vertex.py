"""Google Vertex AI end to end through ``pi -p``: Gemini with Application Default Credentials (a service
account key whose token endpoint is the fake authorization server) and with an API key, Claude on Vertex
as anthropic's Vertex client sends it, and the message when the ``vertex`` extra is missing."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from pi_core.testing.fake_auth import FakeAuthServer
from pi_core.testing.fake_server import FakeModelServer, Reply
from tests.providers.pi16 import clean_env, run_pi, run_pi_here

pytest.importorskip("google.auth", reason="the vertex extra is not installed (pip install -e '.[vertex]')")

PROJECT, LOCATION = "proj-1", "us-east5"


@pytest.fixture
def auth() -> Iterator[FakeAuthServer]:
    with FakeAuthServer() as server:
        yield server


def service_account(tmp_path: Path, auth: FakeAuthServer) -> Path:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption()).decode()
    path = tmp_path / "service-account.json"
    path.write_text(json.dumps({"type": "service_account", "project_id": PROJECT, "private_key_id": "k1",
                                "private_key": pem, "client_email": "pi-test@proj-1.iam.gserviceaccount.com",
                                "client_id": "1", "token_uri": f"{auth.url}/oauth2.googleapis.com/token"}))
    return path


def configure(tmp_path: Path, server: FakeModelServer, provider: str, **env: str) -> dict[str, str]:
    agent = tmp_path / "agent"
    env_ = clean_env(tmp_path, env)
    # A base URL with {location} is filled like the catalog's https://{location}-aiplatform.googleapis.com.
    (agent / "models.json").write_text(json.dumps({"providers": {provider: {"baseUrl": server.url + "/{location}"}}}))
    (agent / "settings.json").write_text(json.dumps({"localServers": False, "retry": {"enabled": False}}))
    return env_


def adc_env(tmp_path: Path, auth: FakeAuthServer) -> dict[str, str]:
    return {"GOOGLE_APPLICATION_CREDENTIALS": str(service_account(tmp_path, auth)), "GOOGLE_CLOUD_PROJECT": PROJECT,
            "GOOGLE_CLOUD_LOCATION": LOCATION}


def test_gemini_with_application_default_credentials(tmp_path: Path, pi_fake_server: FakeModelServer,
                                                     auth: FakeAuthServer) -> None:
    env = configure(tmp_path, pi_fake_server, "google-vertex", **adc_env(tmp_path, auth))
    listed = run_pi_here(["--list-models", "google-vertex"], env, tmp_path)
    assert "gemini-2.5-flash" in listed.stdout  # ADC + project + location make the provider available
    (tmp_path / "a.txt").write_text("alpha\n")
    pi_fake_server.add(Reply(tool_calls=[("read", {"path": "a.txt"})]), Reply(text="vertex gemini read it"))
    done = run_pi(["-p", "--model", "google-vertex/gemini-2.5-flash", "read a.txt"], env, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "vertex gemini read it" in done.stdout
    for sent in pi_fake_server.requests:
        assert sent.path == (f"/{LOCATION}/v1/projects/{PROJECT}/locations/{LOCATION}/publishers/google/models/"
                             "gemini-2.5-flash:streamGenerateContent")
        assert sent.query == {"alt": "sse"}
        assert sent.headers["authorization"].startswith("Bearer ya29.fake-")
        assert "x-goog-api-key" not in sent.headers
    assert len(auth.google_assertions) == 1  # one token for both turns
    assertion = auth.google_assertions[0]
    assert assertion["iss"] == "pi-test@proj-1.iam.gserviceaccount.com"
    assert assertion["scope"] == "https://www.googleapis.com/auth/cloud-platform"


def test_gemini_with_a_vertex_api_key_uses_the_global_endpoint(tmp_path: Path, pi_fake_server: FakeModelServer,
                                                               ) -> None:
    env = configure(tmp_path, pi_fake_server, "google-vertex", GOOGLE_CLOUD_API_KEY="vertex-key-1")
    pi_fake_server.add(Reply(text="express mode"))
    done = run_pi(["-p", "--model", "google-vertex/gemini-2.5-pro", "hi"], env, tmp_path)
    assert done.returncode == 0, done.stderr
    sent = pi_fake_server.requests[0]
    assert sent.path == "/global/v1/publishers/google/models/gemini-2.5-pro:streamGenerateContent"
    assert sent.headers["x-goog-api-key"] == "vertex-key-1" and "authorization" not in sent.headers


def test_claude_on_vertex_is_sent_as_anthropics_vertex_client_sends_it(
        tmp_path: Path, pi_fake_server: FakeModelServer, auth: FakeAuthServer) -> None:
    env = configure(tmp_path, pi_fake_server, "google-vertex-anthropic", **adc_env(tmp_path, auth))
    pi_fake_server.add(Reply(text="claude on vertex"))
    done = run_pi(["-p", "--model", "google-vertex-anthropic/claude-sonnet-4-6", "hi"], env, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "claude on vertex" in done.stdout
    sent = pi_fake_server.requests[0]
    oracle = _anthropic_vertex_request()
    assert sent.path == f"/{LOCATION}" + oracle["path"]
    assert sent.headers["authorization"].startswith("Bearer ya29.fake-") and "x-api-key" not in sent.headers
    assert "model" not in sent.body and sent.body["anthropic_version"] == oracle["body"]["anthropic_version"]
    assert sent.body["stream"] is True and sent.body["messages"][-1]["role"] == "user"
    session = next((tmp_path / "agent" / "sessions").rglob("*.jsonl")).read_text()
    assert '"provider":"google-vertex-anthropic"' in session and '"api":"google-vertex-anthropic"' in session


def _anthropic_vertex_request() -> dict:
    """What ``anthropic.AnthropicVertex`` sends for the same model, captured without a network."""
    import httpx2
    from anthropic import AnthropicVertex

    seen: dict = {}

    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.update(path=request.url.path, body=json.loads(request.content))
        return httpx2.Response(200, headers={"content-type": "text/event-stream"},
                               content=b'event: message_stop\ndata: {"type":"message_stop"}\n\n')

    client = AnthropicVertex(region=LOCATION, project_id=PROJECT, access_token="t",
                             http_client=httpx2.Client(transport=httpx2.MockTransport(handler)))
    with client.messages.stream(model="claude-sonnet-4-6", max_tokens=8, messages=[{"role": "user", "content": "hi"}]) as s:
        for _ in s:
            pass
    return seen


def test_without_the_vertex_extra_the_error_names_it(tmp_path: Path, pi_fake_server: FakeModelServer,
                                                     auth: FakeAuthServer) -> None:
    blocked = tmp_path / "no-google"
    (blocked / "google").mkdir(parents=True)
    (blocked / "google" / "__init__.py").write_text("raise ImportError('google-auth is not installed')\n")
    env = configure(tmp_path, pi_fake_server, "google-vertex", **adc_env(tmp_path, auth), PYTHONPATH=str(blocked))
    done = run_pi(["-p", "--model", "google-vertex/gemini-2.5-flash", "hi"], env, tmp_path)
    assert done.returncode == 1 and pi_fake_server.requests == []
    assert 'needs the vertex extra: pip install "pi-harness[vertex]"' in done.stderr
    assert "Traceback" not in done.stderr
