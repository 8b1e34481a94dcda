"""pi's HTTP/1.1 transport (pi_core.llm.aio on asyncio sockets, pi_core.llm.http11 framing) answers exactly as
httpx2's own transport (httpcore2 and h11) does: the same responses, bodies, raw headers and keep-alive reuse,
odd-but-valid answers read the same, and a misbehaving server fails with the same exception types and texts —
checked side by side against a server that sends fixed bytes. A print run on every core wire then loads none of
httpcore2, anyio, sniffio, truststore or h11 (issue 19: ~60 ms of a ``pi -p`` run)."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Self

import httpx2
import pytest

from pi_core.llm import aio, transport
from pi_core.llm.tls import provider_context
from pi_core.testing.fake_server import Reply
from pi_core.testing.runner import pi_runner

OK = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-Mixed-Case: Yes\r\n\r\nhello"
CHUNKED = (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: text/event-stream\r\n\r\n"
           b"5\r\nhello\r\n7;ext=1\r\n, world\r\n0\r\nX-Trailer: t\r\n\r\n")
CLOSE_DELIMITED = b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nuntil the end"
HTTP10 = b"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nold server"
CONTINUE_FIRST = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok"
NO_CONTENT = b"HTTP/1.1 204 No Content\r\n\r\n"
ERROR = b"HTTP/1.1 429 Too Many Requests\r\nRetry-After: 3\r\nContent-Length: 11\r\n\r\nslow down!!"
ODD_BUT_VALID = {
    "folded header": b"HTTP/1.1 200 OK\r\nX-Folded: a\r\n  b\r\n\tc\r\nContent-Length: 2\r\n\r\nok",
    "bare LF": b"HTTP/1.1 200 OK\nContent-Length: 2\nX-A: b\n\nok",
    "no reason": b"HTTP/1.1 200\r\nContent-Length: 2\r\n\r\nok",
    "repeated length": b"HTTP/1.1 200 OK\r\nContent-Length: 2, 2\r\ncontent-length: 2\r\n\r\nok",
    "Chunked, upper-case size": (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: Chunked\r\n\r\n"
                                 b"A  \r\n0123456789\r\n0\r\n\r\n"),
    "length and connection close": b"HTTP/1.1 200 OK\r\nConnection: keep-alive, Close\r\nContent-Length: 2\r\n\r\nok",
}

Outcome = tuple[Any, ...]


class RawServer:
    """A server on 127.0.0.1 whose ``_answer`` writes raw bytes; counts connections, ends kept-alive ones on exit."""

    path = "/v1/x"

    def __init__(self) -> None:
        self.connections = 0
        self._handlers: set[asyncio.Task[None]] = set()

    async def __aenter__(self) -> Self:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.url = f"http://127.0.0.1:{self.server.sockets[0].getsockname()[1]}{self.path}"
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.server.close()
        for handler in self._handlers:  # kept-alive connections wait for a next request: end them here
            handler.cancel()
        await asyncio.gather(*self._handlers, return_exceptions=True)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        handler = asyncio.current_task()
        assert handler is not None
        self._handlers.add(handler)
        await self._answer(reader, writer)

    async def _answer(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        raise NotImplementedError


class CannedServer(RawServer):
    """Answers every request with ``reply`` (bytes written as they are; ``close`` ends the connection after)."""

    path = "/v1/x?a=1"

    def __init__(self, reply: bytes, *, close: bool = False, trickle: bool = False) -> None:
        super().__init__()
        self.reply = reply
        self.close = close
        self.trickle = trickle  # a few bytes per write: every parser state meets a read boundary

    async def _answer(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                               if line.lower().startswith(b"content-length:")), 0)
                await reader.readexactly(length)
                if head.lower().find(b"transfer-encoding: chunked") >= 0:
                    await reader.readuntil(b"0\r\n\r\n")
                for start in range(0, len(self.reply), 3 if self.trickle else len(self.reply) or 1):
                    writer.write(self.reply[start:start + 3] if self.trickle else self.reply)
                    await writer.drain()
                    if self.trickle:
                        await asyncio.sleep(0.002)
                if self.close:
                    break
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError):
            pass
        finally:
            writer.close()


def pi_client() -> httpx2.AsyncClient:
    return httpx2.AsyncClient(transport=aio.AsyncioTransport(provider_context), timeout=5.0)


def httpx2_client() -> httpx2.AsyncClient:
    return httpx2.AsyncClient(trust_env=False, timeout=5.0, verify=False)  # plain http: no CA bundle to load


async def exchange(client: httpx2.AsyncClient, url: str, times: int = 1, **kwargs: Any) -> list[Outcome]:
    seen: list[Outcome] = []
    for _ in range(times):
        try:
            async with client.stream("POST", url, content=b'{"q": 1}', **kwargs) as response:
                body = b"".join([part async for part in response.aiter_raw()])
                seen.append((response.status_code, response.headers.raw, body, response.http_version,
                             response.reason_phrase))
        except httpx2.HTTPError as err:
            seen.append((type(err).__name__, str(err)))
    return seen


def both(scenario: Callable[[httpx2.AsyncClient], Awaitable[Outcome]]) -> tuple[Outcome, Outcome]:
    """``scenario`` run through httpx2's own transport and through pi's, each in a fresh event loop."""

    async def run(client: httpx2.AsyncClient) -> Outcome:
        async with client:
            return await scenario(client)

    return asyncio.run(run(httpx2_client())), asyncio.run(run(pi_client()))


def canned(reply: bytes, *, close: bool, times: int, trickle: bool = False, **kwargs: Any) -> tuple[Outcome, Outcome]:
    """``times`` requests to a server answering ``reply``, through both transports: what each got, and how
    many connections the server accepted."""

    async def scenario(client: httpx2.AsyncClient) -> Outcome:
        async with CannedServer(reply, close=close, trickle=trickle) as server:
            return (*await exchange(client, server.url, times=times, **kwargs), server.connections)

    return both(scenario)


@pytest.mark.parametrize("reply", [OK, CHUNKED, CONTINUE_FIRST, NO_CONTENT, ERROR],
                         ids=["length", "chunked", "continue", "204", "429"])
def test_responses_and_connection_reuse_match_httpx2(reply: bytes) -> None:
    ours, theirs = canned(reply, close=False, times=3)
    assert ours == theirs
    assert isinstance(ours[0][0], int) and ours[-1] == 1  # answered, all on one kept-alive connection


@pytest.mark.parametrize("reply", list(ODD_BUT_VALID.values()), ids=list(ODD_BUT_VALID))
def test_unusual_but_valid_responses_read_as_with_httpx2(reply: bytes) -> None:
    ours, theirs = canned(reply, close=False, times=2)
    assert ours == theirs
    assert ours[0][:3] == theirs[0][:3] and ours[0][0] == 200


@pytest.mark.parametrize("reply", [OK, CHUNKED, CONTINUE_FIRST], ids=["length", "chunked", "continue"])
def test_a_response_arriving_a_few_bytes_at_a_time_reads_as_with_httpx2(reply: bytes) -> None:
    ours, theirs = canned(reply, close=False, times=2, trickle=True)
    assert ours == theirs
    assert ours[-1] == 1


def test_a_streamed_request_body_goes_chunked_and_a_head_request_reads_no_body() -> None:
    async def parts() -> Any:
        for piece in (b"ab", b"", b"cd"):
            yield piece

    async def scenario(client: httpx2.AsyncClient) -> Outcome:
        async with CannedServer(OK) as server:
            streamed = await client.post(server.url, content=parts())
            head = await client.head(server.url)
            return streamed.content, head.status_code, head.content, server.connections

    ours, theirs = both(scenario)
    assert ours == theirs == (b"hello", 200, b"", 1)


def test_a_header_value_with_a_line_break_is_refused_before_sending() -> None:
    async def scenario(client: httpx2.AsyncClient) -> Outcome:
        async with CannedServer(OK) as server:
            seen = await exchange(client, server.url, headers={"x-key": "a\r\nInjected: yes"})
            return (*seen, *await exchange(client, server.url), server.connections)

    ours, theirs = both(scenario)
    assert ours == theirs
    assert ours[0] == ("LocalProtocolError", "Illegal header value b'a\\r\\nInjected: yes'")


BROKEN = {
    "closed before answering": b"",
    "bad status line": b"HTTP/1.1 two hundred OK\r\n\r\n",
    "truncated length body": b"HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\nshort",
    "truncated chunked body": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel",
    "bad chunk size": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n",
    "headers too large": b"HTTP/1.1 200 OK\r\nX-Big: " + b"a" * 200_000 + b"\r\n\r\n",
    "cut in the status line": b"HTTP/1.1 200 O",
    "junk first": b" junk",
    "blank line first": b"\r\nHTTP/1.1 200 OK\r\n\r\n",
    "continuation first": b"HTTP/1.1 200 OK\r\n folded\r\nContent-Length: 0\r\n\r\n",
    "bad header line": b"HTTP/1.1 200 OK\r\nBad Header: x\r\n\r\n",
    "conflicting lengths": b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello",
    "bad length": b"HTTP/1.1 200 OK\r\nContent-Length: five\r\n\r\nhello",
    "gzip transfer coding": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\nhello",
    "bad chunk footer": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhelloXY0\r\n\r\n",
    "cut in a chunk header": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5",
    "bad trailer": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nBad Trailer\r\n\r\n",
    "interim answer only": b"HTTP/1.1 100 Continue\r\n\r\n",
}


@pytest.mark.parametrize("reply", list(BROKEN.values()), ids=list(BROKEN))
def test_a_misbehaving_server_fails_with_httpx2s_exception_and_text(reply: bytes) -> None:
    ours, theirs = canned(reply, close=True, times=2)
    assert ours == theirs
    assert ours[0][0] == "RemoteProtocolError", ours


@pytest.mark.parametrize("reply", [CLOSE_DELIMITED, HTTP10], ids=["connection-close", "http10"])
def test_close_delimited_bodies_open_a_new_connection_each_time(reply: bytes) -> None:
    ours, theirs = canned(reply, close=True, times=2)
    assert ours == theirs
    assert ours[-1] == 2 and ours[0][2] == reply.split(b"\r\n\r\n", 1)[1]


def test_a_refused_connection_and_an_unknown_scheme_read_as_with_httpx2() -> None:
    """The same exception types; a refusal keeps its ConnectionRefusedError in the chain, where the transport
    finds it (``Connection error.: connection refused``); its text is the OS's, not anyio's summary."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed again: nothing listens there

    async def scenario(client: httpx2.AsyncClient) -> Outcome:
        outcome: list[Any] = []
        for request in (httpx2.Request("POST", f"http://127.0.0.1:{port}/v1"),
                        httpx2.Request("POST", "ftp://127.0.0.1/x")):
            try:
                await client.send(request)
            except httpx2.HTTPError as err:
                outcome.append((type(err).__name__, transport._refused(err),
                                str(err) if isinstance(err, httpx2.UnsupportedProtocol) else None))
        return tuple(outcome)

    ours, theirs = both(scenario)
    assert ours == theirs == (("ConnectError", True, None),
                              ("UnsupportedProtocol", False, "Request URL has an unsupported protocol 'ftp://'."))


def test_a_read_that_stalls_raises_read_timeout() -> None:
    async def scenario(client: httpx2.AsyncClient) -> Outcome:
        async with CannedServer(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhe") as server:
            return tuple(await exchange(client, server.url, timeout=httpx2.Timeout(5.0, read=0.2)))

    ours, theirs = both(scenario)
    assert ours == theirs == (("ReadTimeout", ""),)


def test_requests_past_the_connection_limit_wait_for_a_free_connection(monkeypatch: pytest.MonkeyPatch) -> None:
    """With one connection allowed, a second request waits while the first response is open (up to the pool
    timeout: PoolTimeout, as httpcore2) and runs on the same connection once it is closed."""
    monkeypatch.setattr(aio, "MAX_CONNECTIONS", 1)

    async def scenario() -> tuple[str, bytes, int]:
        client = pi_client()
        async with CannedServer(OK) as server:
            async with client.stream("POST", server.url, content=b"1") as first:
                try:
                    await client.post(server.url, content=b"2", timeout=httpx2.Timeout(5.0, pool=0.2))
                except httpx2.PoolTimeout as err:
                    waited = type(err).__name__
                second = asyncio.create_task(client.post(server.url, content=b"3"))
                await asyncio.sleep(0.1)
                assert not second.done()
                await first.aread()
            answer = await second
            await client.aclose()
            return waited, answer.content, server.connections

    assert asyncio.run(scenario()) == ("PoolTimeout", b"hello", 1)


@pytest.mark.parametrize("api", ["anthropic-messages", "openai-completions", "openai-responses",
                                 "google-generative-ai"])
def test_a_print_run_loads_neither_httpcore2_nor_anyio(tmp_path: Path, api: str) -> None:
    out = tmp_path / "modules.json"
    extension = tmp_path / "modules_at_exit.py"
    extension.write_text("import atexit, json, sys\n"
                         f"atexit.register(lambda: open({str(out)!r}, 'w').write(json.dumps(sorted(sys.modules))))\n")
    with pi_runner(tmp_path, api) as pi:
        pi.server.add(Reply(text="the answer"))
        done = pi.run("-e", str(extension), "-p", "hi")
        assert (done.returncode, done.stdout) == (0, "the answer\n"), done.stderr
    loaded = set(json.loads(out.read_text()))
    assert {"httpx2", "pi_core.llm.aio", "pi_core.llm.http11"} <= loaded
    assert sorted(m for m in loaded if m.split(".")[0] in {"httpcore2", "anyio", "sniffio", "truststore", "h11"}) == []
