"""What every provider wire puts on the network, byte for byte, against the fake model server: a tool-call turn
and the turn after it on one kept-alive connection (chunked answers), a 429 and a 529 retried after their
``retry-after``, a kept-alive connection the server closes as the next request arrives (the request goes again
on a new connection), and the same requests to a server that closes every connection (close-delimited
answers). A relay between pi and the server records each connection's request bytes; they must equal the
recording in ``tests/providers/wire_bytes/`` (the port and version numbers replaced), and the replies must
read as recorded too. The recordings were made on pi's own HTTP/1.1 transport before issue 31 put the wires on
httpx2's (the differential of that switch); ``PI_RECORD_WIRE_BYTES=1`` rewrites them after a deliberate change."""

from __future__ import annotations

import asyncio
import json
import os
import re
import socket
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any, Self

import pytest

from pi_core.providers import ApiProvider, StreamOptions
from pi_core.testing.fake_auth import ACCOUNT_ID, fake_jwt
from pi_core.testing.fake_server import FakeModelServer, Reply, ToolUse
from pi_core.testing.streams import model_for
from pi_core.types import (
    AssistantMessage,
    Context,
    TextContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)

RECORDINGS = Path(__file__).parent / "wire_bytes"
RECORD = os.environ.get("PI_RECORD_WIRE_BYTES") == "1"
CODEX_TOKEN = fake_jwt({"https://api.openai.com/auth": {"chatgpt_account_id": ACCOUNT_ID}, "n": "1"})


def _provider(module: str, name: str = "PROVIDER") -> Callable[[], ApiProvider]:
    def load() -> ApiProvider:
        import importlib

        found = getattr(importlib.import_module(module), name)
        return found() if isinstance(found, type) else found

    return load


WIRES: dict[str, tuple[Callable[[], ApiProvider], str]] = {  # the wire's provider and the key it is given
    "anthropic-messages": (_provider("pi_plugins.anthropic_messages"), "sk-ant-test"),
    "openai-completions": (_provider("pi_plugins.openai_completions"), "sk-test"),
    "openai-responses": (_provider("pi_plugins.openai_responses"), "sk-test"),
    "openai-codex-responses": (_provider("pi_plugins.openai_codex_responses"), CODEX_TOKEN),
    "google-generative-ai": (_provider("pi_plugins.google_generative_ai"), "goog-test"),
    "mistral-conversations": (_provider("pi_plugins.mistral_conversations"), "mistral-test"),
    "pi-messages": (_provider("pi_plugins.pi_messages"), "pi-test"),
    "bedrock-converse-stream": (_provider("pi_plugins.bedrock"), "bedrock-bearer-test"),
}


class Relay:
    """A TCP relay on 127.0.0.1 in front of the fake server: each connection's request bytes, in order; a side
    that closes closes the other."""

    def __init__(self, port: int) -> None:
        self.target = port
        self.sent: list[bytearray] = []
        self._tasks: set[asyncio.Task[None]] = set()

    async def __aenter__(self) -> Self:
        self.server = await asyncio.start_server(self._relay, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.server.close()
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        sent = bytearray()
        self.sent.append(sent)
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target)
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            await asyncio.gather(self._pipe(reader, up_writer, sent), self._pipe(up_reader, writer, None))
        except asyncio.CancelledError:
            pass  # the relay stops: its connections end with it
        finally:
            writer.close()
            up_writer.close()

    @staticmethod
    async def _pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter, record: bytearray | None) -> None:
        try:
            while data := await source.read(65536):
                if record is not None:
                    record += data
                sink.write(data)
                await sink.drain()
        except ConnectionResetError:  # passed on as a reset, not as the end of a close-delimited body
            sink.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            sink.transport.abort()
        except (ConnectionError, OSError):
            pass
        finally:
            sink.close()


def conversation() -> list[Context]:
    """The contexts of two turns: a question, then the same with the model's tool call and its result."""
    question = UserMessage(content="What is in notes.txt?", timestamp=1_700_000_000_000)
    call = AssistantMessage(content=[ToolCall(id="call_1", name="read", arguments={"path": "notes.txt"})],
                            api="test", provider="test", model="test-model", usage=Usage(), stop_reason="toolUse",
                            timestamp=1_700_000_001_000)
    result = ToolResultMessage(tool_call_id="call_1", tool_name="read", content=[TextContent(text="kept alive\n")],
                               timestamp=1_700_000_002_000)
    return [Context(system_prompt="Be brief.", messages=[question]),
            Context(system_prompt="Be brief.", messages=[question, call, result])]


REPLIES = [Reply(tool_calls=[ToolUse("read", {"path": "notes.txt"})], chunk_size=5),
           Reply(text="It says: kept alive.", chunk_size=4),
           Reply.http_error(429, headers={"retry-after-ms": "5"}), Reply(text="after the 429"),
           Reply.http_error(529, headers={"retry-after": "0.005"}), Reply(text="after the 529"),
           Reply(text="after the hang-up"), Reply(text="cut off in the middle", chunk_size=3, disconnect_after=3)]
# Each turn: its context (0: the question, 1: with the tool call and result) and the request layer's retries.
TURNS = [(0, 2), (1, 2), (0, 2), (0, 2), (1, 0), (0, 0)]
HANG_UP_TURN = 4


def outcome(message: AssistantMessage) -> dict[str, Any]:
    return {"stop": message.stop_reason, "error": message.error_message, "text": message.text(),
            "calls": [[c.name, c.arguments] for c in message.content if isinstance(c, ToolCall)],
            "usage": [message.usage.input, message.usage.output]}


async def run_wire(api: str, *, keep_alive: bool) -> tuple[list[str], list[dict[str, Any]]]:
    """The script above on ``api``: the normalized bytes of each connection, and each turn's outcome."""
    load, key = WIRES[api]
    provider = load()
    first, second = conversation()
    with FakeModelServer(keep_alive=keep_alive) as server:
        server.add(*REPLIES)
        async with Relay(server.port) as relay:
            model = model_for(server, api, base_url=server.base_url_for(api).replace(str(server.port),
                                                                                     str(relay.port)))
            outcomes = []
            for turn, (which, retries) in enumerate(TURNS):
                if turn == HANG_UP_TURN and keep_alive:
                    server.hang_up_on_reuse()
                context = (first, second)[which]
                # the recordings are of the HTTP wires: Codex's WebSocket is tests/providers/test_codex_websocket.py
                options = StreamOptions(api_key=key, max_retries=retries, session_id="session-1", transport="sse")
                final = None
                async for event in provider.stream(model, context, options):
                    final = event.final or final
                assert final is not None
                outcomes.append(outcome(final))
            ports = (f":{relay.port}/", ":PORT/"), (f":{server.port}/", ":PORT/")
            for seen in outcomes:
                for port, shown in ports:
                    seen["error"] = seen["error"] and seen["error"].replace(port, shown)
            return [normalized(bytes(sent), relay.port) for sent in relay.sent], outcomes


def normalized(sent: bytes, port: int) -> list[dict[str, Any]]:
    """A connection's requests, each its head's lines and its body, exactly as sent, but for the relay's port
    and package versions."""
    requests = []
    while sent:
        head, separator, rest = sent.partition(b"\r\n\r\n")
        assert separator, f"an unfinished request head: {sent!r}"
        lines = head.decode("latin-1").replace(f"127.0.0.1:{port}", "127.0.0.1:PORT").split("\r\n")
        lines = [re.sub(r"(?i)^(user-agent: .*?)/[0-9][0-9.]*", r"\1/VERSION", line) for line in lines]
        length = next(int(line.split(":", 1)[1]) for line in lines if line.lower().startswith("content-length:"))
        requests.append({"head": lines, "body": rest[:length].decode("utf-8")})
        sent = rest[length:]
    return requests


def exchange(api: str, keep_alive: bool) -> dict[str, Any]:
    if api == "bedrock-converse-stream":
        pytest.importorskip("botocore", reason="the bedrock extra is not installed (pip install -e '.[bedrock]')")
    connections, outcomes = asyncio.run(asyncio.wait_for(run_wire(api, keep_alive=keep_alive), 60))
    return {"connections": connections, "outcomes": outcomes}


def recorded(api: str, keep_alive: bool, got: dict[str, Any]) -> dict[str, Any]:
    path = RECORDINGS / f"{api}-{'keep-alive' if keep_alive else 'close'}.json"
    if RECORD:
        RECORDINGS.mkdir(exist_ok=True)
        path.write_text(json.dumps(got, indent=1, ensure_ascii=False) + "\n")
    result: dict[str, Any] = json.loads(path.read_text())
    return result


@pytest.mark.parametrize("keep_alive", [True, False], ids=["keep-alive", "close"])
@pytest.mark.parametrize("api", sorted(WIRES))
def test_each_wire_sends_the_recorded_bytes(api: str, keep_alive: bool) -> None:
    got = exchange(api, keep_alive)
    assert got == recorded(api, keep_alive, got)
    texts = [o["text"] for o in got["outcomes"]]
    assert texts[1:5] == ["It says: kept alive.", "after the 429", "after the 529", "after the hang-up"]
    assert got["outcomes"][5]["stop"] == "error"
    # One kept-alive connection serves the turns until the server hangs up on one, a second one the rest (the
    # resent request and the turn cut off); a closing server, one connection per request.
    assert len(got["connections"]) == (2 if keep_alive else 8)

