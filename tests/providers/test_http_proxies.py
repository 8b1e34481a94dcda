"""A proxy in the environment that pi cannot use says so: a proxy that refuses the connection is named (not
"is the local server running?" about the model's server), without its credentials, and a loopback one is not
retried; a SOCKS proxy (which httpx2 could only use with a package pi does not install) fails with a text
naming it instead of httpx2's "pip install httpx[socks]"."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path

import pytest
from pi_plugins.anthropic_messages import PROVIDER as ANTHROPIC

from pi_core.llm import transport
from pi_core.llm.retry import is_request_retryable
from pi_core.providers import StreamOptions
from pi_core.testing.fake_server import FakeModelServer, Reply
from pi_core.testing.runner import pi_runner
from pi_core.testing.streams import model_for, user_context
from pi_core.types import AssistantMessage

PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "all_proxy",
                   "no_proxy")


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


@pytest.fixture
def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])  # closed again: nothing listens there


def ask(server: FakeModelServer) -> AssistantMessage:
    async def go() -> AssistantMessage:
        final = None
        async for event in ANTHROPIC.stream(model_for(server, "anthropic-messages"), user_context(),
                                                      StreamOptions(api_key="k", max_retries=2)):
            final = event.final or final
        assert final is not None
        return final

    return asyncio.run(asyncio.wait_for(go(), 30))


def test_a_proxy_that_refuses_is_named_without_its_credentials(pi_fake_server: FakeModelServer, closed_port: int,
                                                               clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("HTTP_PROXY", f"http://user:secret@127.0.0.1:{closed_port}")
    message = ask(pi_fake_server)
    assert message.error_message == (
        f"Connection error.: the proxy http://127.0.0.1:{closed_port} refused the connection (is it running?)"
        + transport.origin_suffix("test", "POST", pi_fake_server.url + "/v1/messages"))
    assert not is_request_retryable(message)  # nothing listens on a loopback port: no retry helps
    clean_env.setenv("NO_PROXY", "127.0.0.1")
    pi_fake_server.add(Reply(text="direct"))
    assert ask(pi_fake_server).text() == "direct"


@pytest.mark.parametrize("variable", ["ALL_PROXY", "https_proxy"])
def test_a_socks_proxy_fails_with_a_text_naming_it(pi_fake_server: FakeModelServer, clean_env: pytest.MonkeyPatch,
                                                   variable: str) -> None:
    clean_env.setenv(variable, "socks5://me:pw@127.0.0.1:1080")
    message = ask(pi_fake_server)
    assert message.error_message == ("Cannot use the SOCKS proxy socks5://127.0.0.1:1080 named in the environment "
                                     "(HTTPS_PROXY, HTTP_PROXY or ALL_PROXY): pi uses http:// proxies only")
    assert pi_fake_server.requests == []


def test_pi_print_run_names_the_proxy_that_refused(tmp_path: Path, closed_port: int,
                                                   clean_env: pytest.MonkeyPatch) -> None:
    with pi_runner(tmp_path) as pi:
        pi.extra_env["HTTPS_PROXY"] = pi.extra_env["HTTP_PROXY"] = f"127.0.0.1:{closed_port}"
        done = pi.run("-p", "hi")
        assert done.returncode == 1
        assert done.stderr.startswith(f"Connection error.: the proxy http://127.0.0.1:{closed_port} refused the "
                                      "connection (is it running?) [provider fake, POST http://127.0.0.1:")
        assert "Traceback" not in done.stderr and pi.server.requests == []
