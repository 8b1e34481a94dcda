"""Proxies (HTTPS_PROXY, HTTP_PROXY, NO_PROXY) and custom CA bundles (SSL_CERT_FILE, REQUESTS_CA_BUNDLE,
NODE_EXTRA_CA_CERTS) on the provider transport, against a TLS fake model server and a fake proxy."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pi_plugins.anthropic_messages import PROVIDER as ANTHROPIC
from pi_plugins.google_generative_ai import PROVIDER as GOOGLE
from pi_plugins.openai_completions import PROVIDER as COMPLETIONS

from pi_core.providers import StreamOptions
from pi_core.testing.fake_proxy import Certificates, FakeProxy, make_certificates
from pi_core.testing.fake_server import FakeModelServer, Reply
from pi_core.testing.pi_home import write_models
from pi_core.testing.runner import PiRunner
from pi_core.testing.streams import model_for, user_context
from pi_core.types import AssistantMessage

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command")
ENV = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "all_proxy", "no_proxy",
       "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "NODE_EXTRA_CA_CERTS")
PROVIDERS: dict[str, Any] = {"anthropic-messages": ANTHROPIC, "openai-completions": COMPLETIONS,
                             "google-generative-ai": GOOGLE}


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Certificates:
    return make_certificates(tmp_path_factory.mktemp("certs"))


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in ENV:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


@pytest.fixture
def tls_server(certs: Certificates) -> Iterator[FakeModelServer]:
    with FakeModelServer(tls=certs.server_context()) as server:
        yield server


def ask(server: FakeModelServer, wire: str = "anthropic-messages") -> AssistantMessage:
    server.add(Reply(text="over tls"))

    async def go() -> AssistantMessage:
        events = [e async for e in PROVIDERS[wire].stream(model_for(server, wire), user_context(),
                                                          StreamOptions(api_key="k", max_retries=0))]
        assert events[-1].final is not None
        return events[-1].final

    return asyncio.run(go())


@pytest.mark.parametrize("wire", sorted(PROVIDERS))
def test_ssl_cert_file_trusts_a_private_ca(tls_server: FakeModelServer, certs: Certificates,
                                           clean_env: pytest.MonkeyPatch, wire: str) -> None:
    clean_env.setenv("SSL_CERT_FILE", str(certs.ca))
    assert ask(tls_server, wire).text() == "over tls"


def test_without_the_ca_the_certificate_is_refused(tls_server: FakeModelServer, clean_env: pytest.MonkeyPatch) -> None:
    message = ask(tls_server)
    assert message.stop_reason == "error" and tls_server.requests == []
    assert (message.error_message or "").startswith("Connection error.: ")
    assert "CERTIFICATE_VERIFY_FAILED" in (message.error_message or "")
    assert (message.error_message or "").endswith(f"[provider test, POST {tls_server.url}/v1/messages]")


@pytest.mark.parametrize("variable", ["REQUESTS_CA_BUNDLE", "NODE_EXTRA_CA_CERTS"])
def test_requests_ca_bundle_and_node_extra_ca_certs(tls_server: FakeModelServer, certs: Certificates,
                                                    clean_env: pytest.MonkeyPatch, variable: str) -> None:
    clean_env.setenv(variable, str(certs.ca))
    assert ask(tls_server).text() == "over tls"


def test_https_proxy_tunnels_the_request(tls_server: FakeModelServer, certs: Certificates,
                                         clean_env: pytest.MonkeyPatch) -> None:
    with FakeProxy() as proxy:
        clean_env.setenv("SSL_CERT_FILE", str(certs.ca))
        clean_env.setenv("HTTPS_PROXY", proxy.url)
        assert ask(tls_server).text() == "over tls"
        assert proxy.targets == [f"127.0.0.1:{tls_server.port}"]


def test_no_proxy_bypasses_it(tls_server: FakeModelServer, certs: Certificates, clean_env: pytest.MonkeyPatch) -> None:
    with FakeProxy() as proxy:
        clean_env.setenv("SSL_CERT_FILE", str(certs.ca))
        clean_env.setenv("HTTPS_PROXY", proxy.url)
        clean_env.setenv("NO_PROXY", "localhost,127.0.0.1")
        assert ask(tls_server).text() == "over tls"
        assert proxy.targets == []


def test_http_proxy_relays_a_plain_http_request(pi_fake_server: FakeModelServer, clean_env: pytest.MonkeyPatch) -> None:
    with FakeProxy() as proxy:
        clean_env.setenv("HTTP_PROXY", proxy.url)
        assert ask(pi_fake_server, "openai-completions").text() == "over tls"
        assert proxy.targets == [f"127.0.0.1:{pi_fake_server.port}"]
        assert pi_fake_server.requests[0].path == "/v1/chat/completions"


def test_pi_through_a_proxy_to_a_private_ca_server(tmp_path: Path, tls_server: FakeModelServer, certs: Certificates,
                                                   clean_env: pytest.MonkeyPatch) -> None:
    with FakeProxy() as proxy:
        home, cwd = tmp_path / "agent", tmp_path / "project"
        cwd.mkdir()
        write_models(home, tls_server.base_url_for("openai-responses"), "openai-responses")
        runner = PiRunner(tls_server, "openai-responses", home, cwd,
                          {"HTTPS_PROXY": proxy.url, "SSL_CERT_FILE": str(certs.ca)})
        tls_server.add(Reply(text="through the proxy"))
        done = runner.run("--no-session", "-p", "hi")
        assert (done.returncode, done.stdout.strip()) == (0, "through the proxy"), done.stderr
        assert proxy.targets == [f"127.0.0.1:{tls_server.port}"]
