"""pi's SSE transport (pi_core.llm.transport) on all four wires: decoding, idle timeout, retries, errors.

Issue items proven here: invalid UTF-8 decoded with replacement on every wire (17.3); the stream idle
timeout (17.11); Google honours ``x-should-retry`` as the others do, a refused loopback connection fails
fast and every provider error names the provider and the URL it tried (20).
"""

from __future__ import annotations

import asyncio
import socket
import threading
from typing import Any

import pytest
from pi_plugins.anthropic_messages import PROVIDER as ANTHROPIC
from pi_plugins.google_generative_ai import PROVIDER as GOOGLE
from pi_plugins.openai_completions import PROVIDER as COMPLETIONS
from pi_plugins.openai_responses import PROVIDER as RESPONSES

from pi_core.llm.retry import RetryPolicy, is_retryable_error, stream_with_retry
from pi_core.llm.sse import SSEDecoder, SSEEvent, SSEOverflow
from pi_core.llm.stream import failure_info
from pi_core.providers import StreamOptions
from pi_core.testing.fake_server import FakeModelServer, Reply
from pi_core.testing.fake_wires import WIRES
from pi_core.testing.streams import assert_protocol, model_for, user_context
from pi_core.types import AssistantMessage, AssistantMessageEvent, Model

PROVIDERS: dict[str, Any] = {"anthropic-messages": ANTHROPIC, "openai-completions": COMPLETIONS,
                             "openai-responses": RESPONSES, "google-generative-ai": GOOGLE}
PATHS = {"anthropic-messages": "/v1/messages", "openai-completions": "/v1/chat/completions",
         "openai-responses": "/v1/responses",
         "google-generative-ai": "/v1beta/models/test-model:streamGenerateContent"}


def stream(model: Model, **opts: Any) -> list[AssistantMessageEvent]:
    opts.setdefault("api_key", "test-key")
    opts.setdefault("max_retries", 0)

    async def go() -> list[AssistantMessageEvent]:
        return [e async for e in PROVIDERS[model.api].stream(model, user_context(), StreamOptions(**opts))]

    events = asyncio.run(asyncio.wait_for(go(), 30))
    assert_protocol(events)
    return events


def last(events: list[AssistantMessageEvent]) -> AssistantMessage:
    final = events[-1].final
    assert final is not None
    return final


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class _Closed:
    """Where nothing listens: ``model_for`` only needs ``base_url_for``."""

    def __init__(self, port: int) -> None:
        self.url = f"http://127.0.0.1:{port}"

    base_url_for = FakeModelServer.base_url_for


# --- the decoder ------------------------------------------------------------------------------------


def decode(*chunks: bytes) -> list[SSEEvent]:
    decoder = SSEDecoder()
    out = [event for chunk in chunks for event in decoder.feed(chunk)]
    return out + decoder.finish()


def test_lines_end_at_lf_crlf_and_cr_even_across_reads() -> None:
    assert decode(b"event: a\r\ndata: 1\r", b"\n\r\ndata: 2\r\rdata:3\n\n") == [
        SSEEvent("a", "1"), SSEEvent("", "2"), SSEEvent("", "3")]


def test_multi_line_data_comments_and_a_last_frame_without_blank_line() -> None:
    assert decode(b": keep-alive\ndata: {\"a\":\ndata: 1}\n\ndata: tail") == [
        SSEEvent("", '{"a":\n1}'), SSEEvent("", "tail")]


def test_a_character_split_between_reads_and_u2028_inside_json_stay_whole() -> None:
    text = 'data: {"t":"é\u2028ok"}\n\n'.encode()
    cut = text.index("é".encode()) + 1  # between the two bytes of é
    assert decode(text[:cut], text[cut:]) == [SSEEvent("", '{"t":"é\u2028ok"}')]


def test_invalid_utf8_becomes_replacement_characters() -> None:
    assert decode(b'data: {"t":"caf\xff \xc3"}\n\n') == [SSEEvent("", '{"t":"caf\ufffd \ufffd"}')]


def test_an_event_that_never_ends_is_bounded() -> None:
    decoder = SSEDecoder(max_event_bytes=1000)
    decoder.feed(b"data: " + b"x" * 500 + b"\n")
    with pytest.raises(SSEOverflow):
        decoder.feed(b"data: " + b"x" * 600)


# --- every wire ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("wire", WIRES)
def test_invalid_utf8_in_the_stream_is_replaced_not_fatal(pi_fake_server: FakeModelServer, wire: str) -> None:
    pi_fake_server.add(Reply(text="caf\ufffd au lait", invalid_utf8=True))
    message = last(stream(model_for(pi_fake_server, wire)))
    assert (message.stop_reason, message.text()) == ("stop", "caf\ufffd au lait")


@pytest.mark.parametrize("wire", WIRES)
def test_a_trickling_stream_ends_at_the_idle_timeout(pi_fake_server: FakeModelServer, wire: str) -> None:
    pi_fake_server.add(Reply(text="partial", trickle_after="content", trickle_s=0.05))
    message = last(stream(model_for(pi_fake_server, wire), idle_timeout_s=0.5))
    assert message.stop_reason == "error" and message.text() == "partial"
    assert (message.error_message or "").startswith("Request timed out: no complete event for 0.5 s [provider test, ")
    assert is_retryable_error(message)


def test_no_response_at_all_ends_at_the_idle_timeout(pi_fake_server: FakeModelServer) -> None:
    pi_fake_server.add(Reply(text="late", stall_after=0, stall_s=30))
    message = last(stream(model_for(pi_fake_server, "openai-completions"), idle_timeout_s=0.4))
    assert message.stop_reason == "error" and message.text() == ""
    assert "no complete event for 0.4 s" in (message.error_message or "")


@pytest.mark.parametrize("wire", WIRES)
def test_x_should_retry_false_stops_the_transport_retrying(pi_fake_server: FakeModelServer, wire: str) -> None:
    pi_fake_server.add(Reply.http_error(503, headers={"x-should-retry": "false"}), Reply(text="never"))
    message = last(stream(model_for(pi_fake_server, wire), max_retries=2))
    assert message.stop_reason == "error" and len(pi_fake_server.requests) == 1
    info = failure_info(message)
    assert info is not None and (info.status, info.retryable) == (503, False)


@pytest.mark.parametrize("wire", WIRES)
def test_x_should_retry_true_retries_even_a_400(pi_fake_server: FakeModelServer, wire: str) -> None:
    pi_fake_server.add(Reply.http_error(400, headers={"x-should-retry": "true", "retry-after-ms": "5"}),
                       Reply(text="second try"))
    message = last(stream(model_for(pi_fake_server, wire), max_retries=1))
    assert message.text() == "second try" and len(pi_fake_server.requests) == 2


@pytest.mark.parametrize("wire", WIRES)
def test_status_errors_name_the_provider_and_url(pi_fake_server: FakeModelServer, wire: str) -> None:
    pi_fake_server.add(Reply.http_error(404, "no such model"))
    message = last(stream(model_for(pi_fake_server, wire)))
    assert (message.error_message or "").startswith("404 ")
    assert (message.error_message or "").endswith(f" [provider test, POST {pi_fake_server.url}{PATHS[wire]}]")


@pytest.mark.parametrize("wire", WIRES)
def test_refused_loopback_connection_fails_fast_and_says_where(wire: str) -> None:
    port = free_port()
    model = model_for(_Closed(port), wire)  # type: ignore[arg-type]
    notices: list[Any] = []
    policy = RetryPolicy(max_retries=3, base_delay_s=5, max_delay_s=5)  # a retry would hang the test

    async def go() -> list[AssistantMessageEvent]:
        options = StreamOptions(api_key="k", max_retries=3)
        return [e async for e in stream_with_retry(PROVIDERS[wire], model, user_context(), options, policy,
                                                   notices.append)]

    events = asyncio.run(asyncio.wait_for(go(), 4))
    message = last(events)
    assert notices == []
    assert message.error_message == (f"Connection error.: connection refused (is the local server running?)"
                                     f" [provider test, POST http://127.0.0.1:{port}{PATHS[wire]}]")
    assert not is_retryable_error(message)  # nor does the agent layer retry it


def test_a_refused_remote_connection_stays_retryable() -> None:
    from pi_core.llm.http_client import connect_failure
    from pi_core.llm.wire import WireRequest

    refused = ConnectionRefusedError(111, "Connect call failed")
    err = OSError("All connection attempts failed")
    err.__cause__ = refused
    failure = connect_failure(err, WireRequest("acme", "https://10.1.2.3/v1/messages", {}, {}))
    assert failure.retryable and not failure.permanent
    assert str(failure) == "Connection error.: connection refused [provider acme, POST https://10.1.2.3/v1/messages]"


def test_origin_never_shows_credentials_or_query() -> None:
    from pi_core.llm.transport import origin_suffix

    assert origin_suffix("g", "POST", "https://user:secret@example.com:8443/v1/x?key=abc") == (
        " [provider g, POST https://example.com:8443/v1/x]")


@pytest.mark.parametrize("wire", WIRES)
def test_abort_while_waiting_for_the_stream(pi_fake_server: FakeModelServer, wire: str) -> None:
    pi_fake_server.add(Reply(text="first", stall_after="content", stall_s=30))
    options = StreamOptions(api_key="k", max_retries=0)

    async def go() -> list[AssistantMessageEvent]:
        seen = []
        async for event in PROVIDERS[wire].stream(model_for(pi_fake_server, wire), user_context(), options):
            seen.append(event)
            if event.type == "text_delta" and event.partial is not None and event.partial.text() == "first":
                threading.Timer(0.05, options.signal.abort).start()
        return seen

    events = asyncio.run(asyncio.wait_for(go(), 10))
    assert_protocol(events)
    assert (last(events).stop_reason, last(events).text()) == ("aborted", "first")


@pytest.mark.parametrize("wire", WIRES)
def test_one_event_loop_reuses_one_client_for_every_request(pi_fake_server: FakeModelServer, wire: str) -> None:
    from pi_core.llm import http_client

    pi_fake_server.add(Reply(text="one"), Reply(text="two"))
    model = model_for(pi_fake_server, wire)

    async def go() -> tuple[list[str], int]:
        texts = []
        for _ in range(2):
            events = [e async for e in PROVIDERS[wire].stream(model, user_context(),
                                                              StreamOptions(api_key="k", max_retries=0))]
            texts.append(last(events).text())
        return texts, len(http_client._CLIENTS[asyncio.get_running_loop()])

    assert asyncio.run(go()) == (["one", "two"], 1)


@pytest.mark.parametrize("wire", WIRES)
def test_turns_share_one_kept_alive_connection(wire: str) -> None:
    """Against a server that keeps connections open (as the real APIs do), every request of a run after the
    first goes out on the same connection; a dropped connection is replaced by a fresh one."""
    with FakeModelServer(keep_alive=True) as server:
        server.add(Reply(text="one"), Reply(text="two"), Reply(text="lost", disconnect_after=1), Reply(text="four"))
        model = model_for(server, wire)

        async def go() -> list[tuple[str | None, str, int]]:
            seen = []
            for _ in range(4):
                events = [e async for e in PROVIDERS[wire].stream(model, user_context(),
                                                                  StreamOptions(api_key="k", max_retries=0))]
                seen.append((last(events).stop_reason, last(events).text(), server.connections))
            return seen

        outcome = asyncio.run(asyncio.wait_for(go(), 30))
    assert [(reason, conns) for reason, _text, conns in outcome] == [("stop", 1), ("stop", 1), ("error", 1),
                                                                     ("stop", 2)]
    assert [outcome[0][1], outcome[1][1], outcome[3][1]] == ["one", "two", "four"]
