"""What pi sends for what users configure, as Pi 1.6.0 (fetch) does: header values are trimmed and Latin-1
text goes out as its bytes; a header no HTTP request can carry fails with a text naming it, never a raw Python
exception and never retried; a 307/308 is followed with the POST and its body."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from pi_plugins.anthropic_messages import PROVIDER as ANTHROPIC

from pi_core.llm import transport
from pi_core.providers import StreamOptions
from pi_core.testing.fake_server import FakeModelServer, Reply
from pi_core.testing.pi_home import write_models
from pi_core.testing.runner import PiRunner, pi_runner
from pi_core.testing.streams import model_for, user_context
from pi_core.types import AssistantMessage


def ask(server: FakeModelServer, **opts: Any) -> AssistantMessage:
    async def go() -> AssistantMessage:
        final = None
        async for event in ANTHROPIC.stream(model_for(server, "anthropic-messages"), user_context(),
                                                      StreamOptions(api_key="k", max_retries=2, **opts)):
            final = event.final or final
        assert final is not None
        return final

    return asyncio.run(asyncio.wait_for(go(), 30))


def test_header_values_are_trimmed_and_latin1_text_is_sent_as_its_bytes(pi_fake_server: FakeModelServer) -> None:
    pi_fake_server.add(Reply(text="sent"))
    assert ask(pi_fake_server, headers={"x-user": "José", "x-team": " padded\t"}).text() == "sent"
    [request] = pi_fake_server.requests
    assert (request.headers["x-user"], request.headers["x-team"]) == ("José", "padded")  # the server reads Latin-1


UNSENDABLE = {
    "beyond Latin-1": ({"x-user": "a “b”"}, ('Header x-user cannot be sent: its value contains "“" (U+201C) at '
                                            "position 2; HTTP header values are limited to Latin-1 characters")),
    "line break": ({"x-user": "a\r\nInjected: 1"}, "Header x-user cannot be sent: its value contains a line break"),
    "NUL": ({"x-user": "a\x00b"}, "Header x-user cannot be sent: its value contains a NUL character"),
    "bad name": ({"x user": "v"}, ("Header name 'x user' cannot be sent: HTTP header names are ASCII letters, "
                                  "digits and -!#$%&'*+.^_`|~, without spaces")),
}


@pytest.mark.parametrize(("headers", "text"), list(UNSENDABLE.values()), ids=list(UNSENDABLE))
def test_a_header_http_cannot_carry_fails_once_with_a_text_naming_it(pi_fake_server: FakeModelServer,
                                                                      headers: dict[str, str], text: str) -> None:
    message = ask(pi_fake_server, headers=headers)
    assert (message.stop_reason, message.error_message) == (
        "error", text + transport.origin_suffix("test", "POST", pi_fake_server.url + "/v1/messages"))
    assert pi_fake_server.requests == []  # nothing sent, nothing retried
    pi_fake_server.add(Reply(text="fine"))
    assert ask(pi_fake_server).text() == "fine"  # the next request is not affected


def test_pi_print_run_with_a_non_latin1_api_key_says_which_header(tmp_path: Path) -> None:
    with pi_runner(tmp_path) as pi:
        models = pi.home / "models.json"
        models.write_text(models.read_text().replace('"test-key"', '"sk-ant\\u2026"'))
        done = pi.run("-p", "hi")
        assert done.returncode == 1
        assert done.stderr.startswith('Header x-api-key cannot be sent: its value contains "…" (U+2026) at position '
                                      "6; HTTP header values are limited to Latin-1 characters [provider fake, POST ")
        assert "Traceback" not in done.stderr and "codec" not in done.stderr
        assert pi.server.requests == []
        [session] = pi.session_files()
        roles = [json.loads(line).get("message", {}).get("role") for line in session.read_text().splitlines()]
        assert roles[-2:] == ["user", "assistant"]  # the prompt and the failed answer are both kept


@pytest.mark.parametrize("status", [307, 308])
def test_a_307_or_308_is_followed_with_the_post_and_its_body(status: int) -> None:
    with FakeModelServer(keep_alive=True) as server:
        server.add(Reply(status=status, headers={"location": "/v1/messages?moved=1"}, body=""),
                   Reply(text="moved here"))
        assert ask(server).text() == "moved here"
        first, second = server.requests
        assert (second.method, second.path, second.query, second.body) == ("POST", "/v1/messages", {"moved": "1"},
                                                                           first.body)
        assert server.connections == 1  # the redirect's own body was read: the connection served both


def test_pi_print_run_follows_a_307(tmp_path: Path) -> None:
    with FakeModelServer() as server:
        write_models(tmp_path / "agent", server.base_url_for("anthropic-messages"), "anthropic-messages")
        (tmp_path / "project").mkdir()
        pi = PiRunner(server, "anthropic-messages", tmp_path / "agent", tmp_path / "project")
        server.add(Reply(status=307, headers={"location": server.url + "/v1/messages"}, body=""),
                   Reply(text="redirected answer"))
        done = pi.run("-p", "hi")
        assert (done.returncode, done.stdout, done.stderr) == (0, "redirected answer\n", "")
        assert [request.path for request in server.requests] == ["/v1/messages", "/v1/messages"]
