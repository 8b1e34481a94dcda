"""Azure OpenAI end to end through ``pi -p``: the Responses models with an API key (checked against openai's
own AzureOpenAI client), deployment names, an Entra ID token, a Foundry model on Chat Completions, and the
message when Entra ID is asked for without the ``azure`` extra."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pi_core.testing.fake_server import FakeModelServer, Reply
from tests.providers.pi16 import clean_env, run_pi


def configure(tmp_path: Path, server: FakeModelServer, **env: str) -> dict[str, str]:
    env_ = clean_env(tmp_path, {"AZURE_OPENAI_BASE_URL": server.url + "/openai/v1", **env})
    (tmp_path / "agent" / "settings.json").write_text(json.dumps({"localServers": False, "retry": {"enabled": False}}))
    return env_


def _azure_openai_request(base: str) -> dict:
    """What ``openai.AzureOpenAI`` sends for a streamed Responses request, captured without a network."""
    import httpx2
    from openai import AzureOpenAI

    seen: dict = {}

    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.update(path=request.url.path, query=dict(request.url.params), headers=dict(request.headers),
                    body=json.loads(request.content))
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=b"data: [DONE]\n\n")

    client = AzureOpenAI(api_key="az-key-1", api_version="v1", base_url=base,
                         http_client=httpx2.Client(transport=httpx2.MockTransport(handler)))
    for _ in client.responses.create(model="my-gpt-deployment", input="hi", stream=True):
        pass
    return seen


def test_responses_with_an_api_key_as_openais_azure_client_sends_it(tmp_path: Path,
                                                                   pi_fake_server: FakeModelServer) -> None:
    env = configure(tmp_path, pi_fake_server, AZURE_OPENAI_API_KEY="az-key-1",
                    AZURE_OPENAI_DEPLOYMENT_NAME_MAP="gpt-4.1=my-gpt-deployment, other=x")
    pi_fake_server.add(Reply(text="hello from azure"))
    done = run_pi(["-p", "--model", "azure/gpt-4.1", "hi"], env, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "hello from azure" in done.stdout
    sent = pi_fake_server.requests[0]
    oracle = _azure_openai_request(pi_fake_server.url + "/openai/v1")
    assert (sent.path, sent.query) == (oracle["path"], oracle["query"]) == ("/openai/v1/responses", {"api-version": "v1"})
    assert sent.headers["api-key"] == oracle["headers"]["api-key"] == "az-key-1"
    assert "authorization" not in sent.headers and "authorization" not in oracle["headers"]
    assert sent.body["model"] == oracle["body"]["model"] == "my-gpt-deployment"
    session = next((tmp_path / "agent" / "sessions").rglob("*.jsonl")).read_text()
    assert '"model":"gpt-4.1"' in session and '"api":"azure-openai-responses"' in session


def test_an_entra_id_token_and_an_api_version(tmp_path: Path, pi_fake_server: FakeModelServer) -> None:
    env = configure(tmp_path, pi_fake_server, AZURE_OPENAI_AD_TOKEN="eyJ.entra.token",
                    AZURE_OPENAI_API_VERSION="2025-04-01-preview")
    pi_fake_server.add(Reply(text="signed in with entra"))
    done = run_pi(["-p", "--model", "azure/gpt-4.1", "hi"], env, tmp_path)
    assert done.returncode == 0, done.stderr
    sent = pi_fake_server.requests[0]
    assert sent.query == {"api-version": "2025-04-01-preview"}
    assert sent.headers["authorization"] == "Bearer eyJ.entra.token" and "api-key" not in sent.headers


def test_a_resource_root_is_given_the_openai_path(monkeypatch: pytest.MonkeyPatch) -> None:
    from pi_plugins import _azure

    from pi_core.types import Model

    model = Model(id="gpt-4.1", api="azure-openai-responses", provider="azure")
    for root in ("https://res.openai.azure.com", "https://res.cognitiveservices.azure.com/openai/",
                 "https://res.services.ai.azure.com/openai/v1/responses"):
        monkeypatch.setenv("AZURE_OPENAI_BASE_URL", root)
        assert _azure.base_url(model) == root.split(".com")[0] + ".com/openai/v1"
    monkeypatch.delenv("AZURE_OPENAI_BASE_URL")
    monkeypatch.setenv("AZURE_OPENAI_RESOURCE_NAME", "my-res")
    assert _azure.base_url(model) == "https://my-res.openai.azure.com/openai/v1"
    monkeypatch.setenv("AZURE_OPENAI_BASE_URL", "https://proxy.example/azure")  # not an Azure host: as given
    assert _azure.base_url(model) == "https://proxy.example/azure"


def test_a_foundry_model_goes_through_chat_completions(tmp_path: Path, pi_fake_server: FakeModelServer) -> None:
    env = configure(tmp_path, pi_fake_server, AZURE_OPENAI_API_KEY="az-key-1")
    pi_fake_server.add(Reply(text="foundry deepseek"))
    done = run_pi(["-p", "--model", "azure/deepseek-v4-pro", "hi"], env, tmp_path)
    assert done.returncode == 0, done.stderr
    sent = pi_fake_server.requests[0]
    assert sent.path == "/openai/v1/chat/completions" and sent.headers["authorization"] == "Bearer az-key-1"
    assert sent.body["model"] == "deepseek-v4-pro"


def test_without_a_base_url_or_the_azure_extra(tmp_path: Path, pi_fake_server: FakeModelServer) -> None:
    no_base = clean_env(tmp_path, {"AZURE_OPENAI_API_KEY": "k"})
    done = run_pi(["-p", "--model", "azure/gpt-4.1", "hi"], no_base, tmp_path)
    assert done.returncode == 1 and "Azure OpenAI base URL is required" in done.stderr
    blocked = tmp_path / "no-azure"
    (blocked / "azure").mkdir(parents=True)
    (blocked / "azure" / "__init__.py").write_text("raise ImportError('azure-identity is not installed')\n")
    env = configure(tmp_path, pi_fake_server, AZURE_OPENAI_ENTRA_ID="1", PYTHONPATH=str(blocked))
    done = run_pi(["-p", "--model", "azure/gpt-4.1", "hi"], env, tmp_path)
    assert done.returncode == 1 and pi_fake_server.requests == []
    assert 'Azure OpenAI with Entra ID needs the azure extra: pip install "pi-harness[azure]"' in done.stderr


def test_entra_id_through_azure_identitys_default_credential(tmp_path: Path, pi_fake_server: FakeModelServer) -> None:
    """``AZURE_OPENAI_ENTRA_ID=1``: azure-identity's chain picks the Azure CLI sign-in (a fake ``az`` here)."""
    pytest.importorskip("azure.identity", reason="the azure extra is not installed (pip install -e '.[azure]')")
    import os
    import sys
    import time

    tools = tmp_path / "bin"
    tools.mkdir()
    calls = tmp_path / "az-calls.txt"
    (tools / "az").write_text(f"#!{sys.executable}\nimport json, sys\n"
                              f"open({str(calls)!r}, 'a').write(' '.join(sys.argv[1:]) + '\\n')\n"
                              f"print(json.dumps({{'accessToken': 'entra-from-az-cli', 'expires_on': {int(time.time()) + 3600},"
                              f" 'tokenType': 'Bearer'}}))\n")
    (tools / "az").chmod(0o755)
    env = configure(tmp_path, pi_fake_server, AZURE_OPENAI_ENTRA_ID="1", AZURE_TOKEN_CREDENTIALS="AzureCliCredential",
                    PATH=f"{tools}{os.pathsep}{os.environ['PATH']}")
    pi_fake_server.add(Reply(text="entra via the cli"))
    done = run_pi(["-p", "--model", "azure/gpt-4.1", "hi"], env, tmp_path)
    assert done.returncode == 0, done.stderr
    sent = pi_fake_server.requests[0]
    assert sent.headers["authorization"] == "Bearer entra-from-az-cli" and "api-key" not in sent.headers
    assert "cognitiveservices.azure.com" in calls.read_text()
