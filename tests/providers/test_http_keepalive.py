"""A kept-alive connection the server closes as pi's next request goes out (the server's idle timeout and the
request crossing) costs the user nothing: pi's transport sends the request once more on a new connection,
where httpx2 alone fails it with ``Server disconnected without sending a response.`` (or a reset). Only a
request on a reused connection that got no answer head is resent, once; on a fresh connection it fails."""

from __future__ import annotations

import asyncio
import json
import socket
import struct
from pathlib import Path
from typing import Any

import pytest

from pi_core.llm.transport import WireError, WireRequest, open_sse
from pi_core.providers import StreamOptions
from pi_core.testing.fake_server import FakeModelServer, Reply, ToolUse
from pi_core.testing.pi_home import write_models
from pi_core.testing.runner import PiRunner

from .raw_servers import OK, RawServer


class HangUpServer(RawServer):
    """Answers ``first`` to the first request on each connection, ``later`` (bytes, then close) to the next one;
    ``later=None``: closes unanswered, with RST when ``reset``."""

    def __init__(self, first: bytes | None = OK, later: bytes | None = None, *, reset: bool = False) -> None:
        super().__init__()
        self.first, self.later, self.reset = first, later, reset
        self.requests = 0

    async def _answer(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            for reply in (self.first, self.later):
                head = await reader.readuntil(b"\r\n\r\n")
                self.requests += 1
                if b"transfer-encoding: chunked" in head.lower():
                    await reader.readuntil(b"0\r\n\r\n")
                else:
                    length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                                   if line.lower().startswith(b"content-length:")), 0)
                    await reader.readexactly(length)
                if reply is None:
                    if self.reset:
                        sock = writer.get_extra_info("socket")
                        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                        writer.transport.abort()
                    break
                writer.write(reply)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError):
            pass
        finally:
            writer.close()


async def post(url: str, times: int) -> list[tuple[int, bytes] | str]:
    """``times`` requests through pi's transport with every retry off: each answer's status and body, or the
    error's text."""
    seen: list[tuple[int, bytes] | str] = []
    for _ in range(times):
        try:
            stream = await open_sse(WireRequest("test", url, {}, {"q": 1}), StreamOptions(max_retries=0))
        except WireError as err:
            seen.append(str(err).replace(url, "URL"))
            continue
        try:
            seen.append((stream.status, b"".join([part async for part in stream.raw()])))
        finally:
            await stream.aclose()
    return seen


def hang_up(times: int, **server: Any) -> tuple[Any, ...]:
    """``times`` requests to a HangUpServer: what each got, then the server's connection and request counts."""

    async def scenario() -> tuple[Any, ...]:
        async with HangUpServer(**server) as hang_up_server:
            seen = await post(hang_up_server.url, times)
            return (*seen, hang_up_server.connections, hang_up_server.requests)

    return asyncio.run(asyncio.wait_for(scenario(), 30))


UNANSWERED = "Connection error.: Server disconnected without sending a response. [provider test, POST URL]"


@pytest.mark.parametrize("reset", [False, True], ids=["fin", "rst"])
def test_a_request_the_server_hung_up_on_goes_again_on_a_new_connection(reset: bool) -> None:
    assert hang_up(3, reset=reset) == ((200, b"hello"),) * 3 + (3, 5)  # the second and third went twice


def test_a_fresh_connection_closed_unanswered_is_not_sent_again() -> None:
    assert hang_up(2, first=None) == (UNANSWERED, UNANSWERED, 2, 2)


@pytest.mark.parametrize("reset", [False, True], ids=["fin", "rst"])
def test_pi_print_run_survives_a_server_closing_its_kept_alive_connection(tmp_path: Path, reset: bool) -> None:
    """With every retry off, a tool-call turn whose second request meets a closed kept-alive connection still
    answers, and the session holds the whole exchange, with no error in it."""
    with FakeModelServer(keep_alive=True) as server:
        home, cwd = tmp_path / "agent", tmp_path / "project"
        cwd.mkdir()
        (cwd / "notes.txt").write_text("kept alive\n")
        write_models(home, server.base_url_for("anthropic-messages"), "anthropic-messages")
        pi = PiRunner(server, "anthropic-messages", home, cwd)
        pi.settings("[retry]\nenabled = false\n\n[retry.provider]\nmaxRetries = 0\n")
        server.add(Reply(tool_calls=[ToolUse("read", {"path": "notes.txt"})]), Reply(text="it says kept alive"))
        server.hang_up_on_reuse(reset=reset)
        done = pi.run("-p", "read notes.txt")
        assert (done.returncode, done.stdout, done.stderr) == (0, "it says kept alive\n", "")
        assert (server.hung_up, len(server.requests), server.connections) == (1, 2, 2)
    [session] = pi.session_files()
    entries = [json.loads(line) for line in session.read_text().splitlines()]
    messages = [entry["message"] for entry in entries if entry["type"] == "message"]
    assert [(m["role"], m.get("stopReason")) for m in messages] == [
        ("user", None), ("assistant", "toolUse"), ("toolResult", None), ("assistant", "stop")]
    assert "kept alive" in json.dumps(messages[2])
