"""Compressed answers through pi's transport: a gzip or deflate event stream (chunked, with chunk extensions
and a trailer) reads as the plain one; a body its ``Content-Encoding`` does not describe (a proxy that says
gzip and sends plain) fails with a text saying so, retried like a dropped connection, never zlib's bare text,
and an error answer whose body cannot be decoded is not mistaken for a context overflow ("400 (no body)")."""

from __future__ import annotations

import asyncio
import gzip
import zlib
from collections.abc import Callable
from typing import Any

import pytest
from pi_plugins.anthropic_messages import PROVIDER as ANTHROPIC

from pi_core.llm import transport
from pi_core.llm.overflow import is_context_overflow
from pi_core.llm.retry import is_request_retryable
from pi_core.providers import StreamOptions
from pi_core.testing.fake_script import Reply
from pi_core.testing.fake_server import FakeModelServer
from pi_core.testing.fake_wires import RENDERERS
from pi_core.testing.streams import model_for, user_context
from pi_core.types import AssistantMessage, Model

from .raw_servers import CannedServer

TEXT = "a compressed answer, " * 20


async def final_reply(model: Model, **opts: Any) -> AssistantMessage:
    final = None
    async for event in ANTHROPIC.stream(model, user_context(), StreamOptions(api_key="k", **opts)):
        final = event.final or final
    assert final is not None
    return final


def compressed_stream(encoding: str, compress: Callable[[bytes], bytes]) -> bytes:
    frames = b"".join(RENDERERS["anthropic-messages"](Reply(text=TEXT, chunk_size=7), 1, "m", {}).frames)
    body = compress(frames)
    pieces = [body[i:i + 50] for i in range(0, len(body), 50)]
    return (f"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Encoding: {encoding}\r\n"
            "Transfer-Encoding: chunked\r\n\r\n").encode() + b"".join(
        b"%x;piece=1\r\n%s\r\n" % (len(piece), piece) for piece in pieces) + b"0\r\nX-Checksum: none\r\n\r\n"


@pytest.mark.parametrize(("encoding", "compress"), [("gzip", gzip.compress), ("deflate", zlib.compress)])
def test_a_compressed_event_stream_reads_as_the_plain_one(encoding: str, compress: Callable[[bytes], bytes]) -> None:
    async def go() -> tuple[str, str | None, int]:
        async with CannedServer(compressed_stream(encoding, compress)) as server:
            model = Model(id="m", api="anthropic-messages", provider="test", base_url=server.url.split("/v1")[0])
            first = await final_reply(model, max_retries=0)
            second = await final_reply(model, max_retries=0)
            assert second.text() == first.text()
            return first.text(), first.stop_reason, server.connections

    assert asyncio.run(asyncio.wait_for(go(), 30)) == (TEXT, "stop", 1)  # and the connection served both


def test_a_stream_its_content_encoding_does_not_describe_fails_clearly_and_is_retried() -> None:
    with FakeModelServer(keep_alive=True) as server:
        model = model_for(server, "anthropic-messages")
        server.add(Reply(text="plain", headers={"content-encoding": "gzip"}))
        message = asyncio.run(final_reply(model, max_retries=0))
        assert message.stop_reason == "error" and message.error_message is not None
        assert message.error_message.startswith("Malformed response: its gzip body could not be decoded (")
        assert message.error_message.endswith(
            transport.origin_suffix("test", "POST", server.url + "/v1/messages"))
        assert is_request_retryable(message)  # as a dropped connection: the request layer sends it again


def test_an_error_answer_whose_body_cannot_be_decoded_is_no_context_overflow() -> None:
    with FakeModelServer() as server:
        server.add(Reply.http_error(400, "bad request", headers={"content-encoding": "gzip"}))
        message = asyncio.run(final_reply(model_for(server, "anthropic-messages"), max_retries=0))
        assert message.error_message == "400 (gzip body could not be decoded)" + transport.origin_suffix(
            "test", "POST", server.url + "/v1/messages")
        assert not is_context_overflow(message)
