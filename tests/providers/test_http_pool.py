"""The connection pool under what sessions do to it: an abort mid-stream gives its connection slot back and
never hands the half-read connection to the next request; many concurrent streams (subagents) past the
connection limit each get their own answer, waiting for a free connection instead of failing."""

from __future__ import annotations

import asyncio

import httpx2
from pi_plugins.anthropic_messages import PROVIDER as ANTHROPIC

from pi_core.providers import StreamOptions
from pi_core.testing.fake_server import FakeModelServer, RecordedRequest, Reply
from pi_core.testing.streams import model_for, user_context
from pi_core.types import AssistantMessage, Model


async def final_reply(model: Model, client: httpx2.AsyncClient, text: str = "Hello",
                      abort_after_deltas: int = 0) -> AssistantMessage:
    final, deltas = None, 0
    options = StreamOptions(api_key="k", max_retries=0, http_client=client)
    async for event in ANTHROPIC.stream(model, user_context(text), options):
        if event.type == "text_delta":
            deltas += 1
            if deltas == abort_after_deltas:
                options.signal.abort()
        final = event.final or final
    assert final is not None
    return final


def limited(connections: int) -> httpx2.AsyncClient:
    return httpx2.AsyncClient(limits=httpx2.Limits(max_connections=connections), trust_env=False)


def test_an_abort_mid_stream_frees_its_connection_for_the_next_request() -> None:
    with FakeModelServer(keep_alive=True) as server:
        server.add(Reply(text="x" * 400, chunk_size=4, chunk_delay=0.02), Reply(text="next answer"))
        model = model_for(server, "anthropic-messages")

        async def go() -> tuple[str | None, str, str | None, str]:
            async with limited(1) as client:  # a connection not given back would make the next request wait
                aborted = await final_reply(model, client, abort_after_deltas=3)
                after = await asyncio.wait_for(final_reply(model, client), 10)
            return aborted.stop_reason, aborted.text(), after.stop_reason, after.text()

        stop, partial, next_stop, next_text = asyncio.run(asyncio.wait_for(go(), 30))
        assert (stop, next_stop, next_text) == ("aborted", "stop", "next answer")
        assert 0 < len(partial) < 400
        assert server.connections == 2  # the aborted stream's connection was closed, not reused half-read


def test_concurrent_streams_past_the_connection_limit_each_get_their_answer() -> None:
    def answer(request: RecordedRequest) -> Reply:
        question = request.body["messages"][0]["content"]
        text = question if isinstance(question, str) else question[0]["text"]
        return Reply(text=f"answer to {text}", chunk_size=3, chunk_delay=0.005)

    with FakeModelServer(keep_alive=True, responder=answer) as server:
        model = model_for(server, "anthropic-messages")

        async def go() -> list[tuple[str | None, str]]:
            async with limited(4) as client:
                finals = await asyncio.gather(*(final_reply(model, client, f"q{i}") for i in range(12)))
            return [(final.stop_reason, final.text()) for final in finals]

        assert asyncio.run(asyncio.wait_for(go(), 60)) == [("stop", f"answer to q{i}") for i in range(12)]
        assert server.connections == 4
