"""The shared httpx2 client of the provider wires: idle connections the server closed are replaced, large
bodies are written whole, read timeouts keep their texts, the requests built once per turn equal httpx2's
``build_request``, and no TLS context is made for plain http (TLS set-up only when https is used)."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pi_plugins.anthropic_messages import PROVIDER as ANTHROPIC
from pi_plugins.openai_completions import PROVIDER as COMPLETIONS

from pi_core.llm import http_client, request_build, transport
from pi_core.llm.environ import getenv_all
from pi_core.llm.tls import DeferredTrustContext
from pi_core.providers import StreamOptions
from pi_core.testing.fake_proxy import make_certificates
from pi_core.testing.fake_server import FakeModelServer, Reply
from pi_core.testing.streams import model_for, user_context
from pi_core.types import AssistantMessage

PROVIDERS: dict[str, Any] = {"anthropic-messages": ANTHROPIC, "openai-completions": COMPLETIONS}


def ask(server: FakeModelServer, wire: str, text: str = "Hello", **opts: Any) -> AssistantMessage:
    return asyncio.run(asyncio.wait_for(final_reply(wire, model_for(server, wire), text, **opts), 30))


async def final_reply(wire: str, model: Any, text: str = "Hello", **opts: Any) -> AssistantMessage:
    """One request on ``wire`` (no retries unless asked): the reply's final message."""
    opts.setdefault("api_key", "k")
    opts.setdefault("max_retries", 0)
    events = [e async for e in PROVIDERS[wire].stream(model, user_context(text), StreamOptions(**opts))]
    final = events[-1].final
    assert final is not None
    return final


@pytest.mark.parametrize("wire", sorted(PROVIDERS))
def test_an_idle_connection_the_server_closed_is_replaced_without_an_error(wire: str) -> None:
    with FakeModelServer(keep_alive=True) as server:
        server.add(Reply(text="one"), Reply(text="two"))
        model = model_for(server, wire)

        async def go() -> list[tuple[str | None, str, int]]:
            seen = []
            for _ in range(2):
                final = await final_reply(wire, model)
                seen.append((final.stop_reason, final.text(), server.connections))
                server.drop_idle_connections()
                await asyncio.sleep(0.1)
            return seen

        assert asyncio.run(asyncio.wait_for(go(), 30)) == [("stop", "one", 1), ("stop", "two", 2)]


@pytest.mark.parametrize("wire", sorted(PROVIDERS))
def test_a_large_request_body_arrives_whole(pi_fake_server: FakeModelServer, wire: str) -> None:
    big = "x" * (6 * 1024 * 1024)  # far beyond the socket buffers: the write waits for the server to read
    pi_fake_server.add(Reply(text="read it"))
    assert ask(pi_fake_server, wire, big).text() == "read it"
    assert big in json.dumps(pi_fake_server.requests[0].body)


def test_a_stalled_read_ends_at_the_read_timeout(pi_fake_server: FakeModelServer) -> None:
    pi_fake_server.add(Reply(text="first", stall_after="content", stall_s=5))
    message = ask(pi_fake_server, "openai-completions", timeout_s=0.3, idle_timeout_s=0)
    assert message.stop_reason == "error"
    assert message.error_message == f"Request timed out.{transport.origin_suffix('test', 'POST', pi_fake_server.url + '/v1/chat/completions')}"


@pytest.mark.parametrize("wire", sorted(PROVIDERS))
def test_requests_carry_the_headers_httpx2_would_merge_and_the_cookies_a_server_set(wire: str) -> None:
    """The shared client's requests are built without ``build_request`` (its merge is done once): the headers
    on the wire are what httpx2's merge gives, in its order, and a cookie a server set goes back, as before."""
    with FakeModelServer(keep_alive=True) as server:
        server.add(Reply(text="one", headers={"set-cookie": "route=a1; Path=/"}), Reply(text="two"))
        model = model_for(server, wire)

        async def go() -> list[str]:
            texts = []
            for _ in range(2):
                final = await final_reply(wire, model)
                texts.append(final.text())
            return texts

        assert asyncio.run(asyncio.wait_for(go(), 30)) == ["one", "two"]
    first, second = server.requests
    assert "cookie" not in first.headers and second.headers["cookie"] == "route=a1"
    assert (first.headers["accept-encoding"], first.headers["connection"]) == ("gzip, deflate", "keep-alive")


def test_the_fast_request_equals_httpx2_build_request() -> None:
    """Every turn (the cached header template), another URL and port, a UTF-8 body, and a client holding a
    cookie: the request is the one httpx2's build_request makes."""
    headers = {"content-type": "application/json", "accept": "text/event-stream", "x-api-key": "k",
               "User-Agent": "pi/1"}
    cases = [("https://api.example/v1/messages?beta=true", b"{}"), ("https://api.example/v1/messages?beta=true",
             '{"q":"h\u00e9"}'.encode()), ("http://127.0.0.1:8080/v1/chat/completions", b"{}" * 5000)]

    async def both() -> list[tuple[Any, Any]]:
        client = http_client.shared_client()
        pairs = []
        for cookie in (False, True):
            if cookie:
                client.cookies.set("route", "a1", domain="api.example")
            for url, body in cases:
                fast = request_build.build_request(client, True, "POST", url, body, headers, 42.0)
                slow = client.build_request("POST", url, content=body, headers=headers,
                                            timeout=request_build.httpx2_timeout(42.0))
                pairs.append((fast, slow))
        return pairs

    pairs = asyncio.run(both())
    for fast, slow in pairs:
        assert (fast.method, fast.url, fast.headers.raw, fast.content, fast.extensions) == (
            slow.method, slow.url, slow.headers.raw, slow.content, slow.extensions)
    assert b"route=a1" in dict(pairs[3][0].headers.raw)[b"Cookie"]


def test_the_ca_certificates_load_at_the_first_https_request_once(pi_fake_server: FakeModelServer,
                                                                  tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A local http:// server costs no CA load; https loads the CA file at the first handshake, once per
    process (every loop's client shares the context)."""
    if shutil.which("openssl") is None:
        pytest.skip("needs the openssl command")
    certs = make_certificates(tmp_path)
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy",
                 "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "NODE_EXTRA_CA_CERTS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SSL_CERT_FILE", str(certs.ca))
    http_client._tls_context.cache_clear()
    pi_fake_server.add(Reply(text="plain"))
    assert ask(pi_fake_server, "anthropic-messages").text() == "plain"
    context = http_client._tls_context(getenv_all(http_client._ENV_KEYS))
    assert isinstance(context, DeferredTrustContext) and context.cert_store_stats()["x509_ca"] == 0
    with FakeModelServer(tls=certs.server_context()) as tls_server:
        tls_server.add(Reply(text="one"), Reply(text="two"))
        assert [ask(tls_server, "anthropic-messages").text() for _ in range(2)] == ["one", "two"]
    assert context.cert_store_stats()["x509_ca"] == 1
    assert (http_client._tls_context.cache_info().currsize, http_client._tls_context.cache_info().misses) == (1, 1)


@pytest.mark.parametrize("wire", sorted(PROVIDERS))
def test_a_long_answer_read_slowly_arrives_whole(pi_fake_server: FakeModelServer, wire: str) -> None:
    text = "".join(f"line {i:06d} of a long answer\n" for i in range(40000))  # ~1.1 MB, far beyond the socket buffers
    pi_fake_server.add(Reply(text=text, chunk_size=4096))

    async def go() -> str:
        final = None
        async for event in PROVIDERS[wire].stream(model_for(pi_fake_server, wire), user_context(),
                                                  StreamOptions(api_key="k", max_retries=0)):
            if event.type == "text_delta" and len(event.delta or "") and event.partial is not None \
                    and len(event.partial.text()) < 8192:
                await asyncio.sleep(0.3)  # the server keeps writing meanwhile
            final = event.final or final
        assert final is not None
        return final.text()

    assert asyncio.run(asyncio.wait_for(go(), 60)) == text


@pytest.mark.parametrize("provider", ["anthropic_messages", "openai_completions", "openai_responses", "google_generative_ai",
                                      "mistral_conversations", "openai_codex_responses", "bedrock"])
def test_a_core_wires_preload_imports_the_whole_http_stack(provider: str) -> None:
    """The interactive app preloads while the user types: the first request then imports nothing of the stack
    (anyio loads its asyncio backend only at the first request, unless preloaded)."""
    code = (f"import sys; from pi_plugins.{provider} import PROVIDER; before = set(sys.modules); PROVIDER.preload(); "
            "print(' '.join(sorted(set(sys.modules) - before)))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert {"httpx2", "httpcore2", "h11", "anyio._backends._asyncio"} <= set(done.stdout.split())
