"""More of what servers send, through httpx2's own transport and pi's side by side (the harness of
test_http11_transport.py): each reads, or fails, the same way, twice on a kept-alive connection. Two where pi does better: bytes after a complete answer (a stray CRLF some servers send)
make pi close that connection and use a new one, where httpx2 fails the next request; a 101 says what
happened instead of h11's internal event name."""

from __future__ import annotations

import httpx2
import pytest

from .test_http11_transport import canned

# An answer neither transport can frame (bare CR line ends) waits for the read timeout: keep that short.
READ_TIMEOUT = httpx2.Timeout(5.0, read=1.0)

EDGES = {
    "length and chunked": b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n"
                          b"5\r\nhello\r\n0\r\n\r\n",
    "103 early hints": b"HTTP/1.1 103 Early Hints\r\nLink: </a>; rel=preload\r\n\r\n"
                       b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
    "two interim answers": b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 102 Processing\r\n\r\n"
                           b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
    "reason is a space": b"HTTP/1.1 200 \r\nContent-Length: 2\r\n\r\nok",
    "value with trailing blanks": b"HTTP/1.1 200 OK\r\nX-A: b  \t\r\nContent-Length: 2\r\n\r\nok",
    "empty value, no blank": b"HTTP/1.1 200 OK\r\nX-Empty:\r\nX-B:c\r\nContent-Length: 2\r\n\r\nok",
    "Latin-1 and UTF-8 values": "HTTP/1.1 200 OK\r\nX-A: caf\u00e9\r\nX-B: \u201cq\u201d\r\nContent-Length: 2\r\n\r\nok"
                                .encode(),
    "chunk sizes with leading zeros": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0005\r\nhello\r\n000\r\n\r\n",
    "quoted chunk extension": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;a=\"x;y\"\r\nhello\r\n0;z\r\n\r\n",
    "HTTP/1.0 keep-alive": b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nok",
    "304 with a length": b"HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n",
    "status 600": b"HTTP/1.1 600 Odd\r\nContent-Length: 2\r\n\r\nok",
    "HTTP/2 status line": b"HTTP/2 200\r\nContent-Length: 2\r\n\r\nok",
    "lower-case version": b"http/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
    "space before colon": b"HTTP/1.1 200 OK\r\nX-A : b\r\nContent-Length: 2\r\n\r\nok",
    "NUL in a value": b"HTTP/1.1 200 OK\r\nX-A: b\x00c\r\nContent-Length: 2\r\n\r\nok",
    "bare CR line ends": b"HTTP/1.1 200 OK\rContent-Length: 2\r\r\nok",
    "gzip transfer coding before chunked": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n",
    "chunk size of 21 digits": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nFFFFFFFFFFFFFFFFFFFFF\r\nhello",
    "blank after chunk size": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5 \r\nhello\r\n0\r\n\r\n",
}


@pytest.mark.parametrize("reply", list(EDGES.values()), ids=list(EDGES))
def test_an_unusual_answer_reads_or_fails_as_with_httpx2(reply: bytes) -> None:
    theirs, ours = canned(reply, close=False, times=2, timeout=READ_TIMEOUT)
    assert ours == theirs


def test_bytes_after_a_complete_answer_retire_the_connection() -> None:
    theirs, ours = canned(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok\r\n", close=False, times=2)
    answer = (200, [(b"Content-Length", b"2")], b"ok", "HTTP/1.1", "OK")
    assert ours == (answer, answer, 2)
    assert theirs == (answer, ("RemoteProtocolError", "no response line received"), 1)


def test_a_101_answer_says_the_server_switched_protocols() -> None:
    theirs, ours = canned(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\n\r\n", close=False, times=1)
    assert ours == (("RemoteProtocolError", "Server switched protocols, which this transport does not support."), 1)
    assert theirs[0][0] == "RemoteProtocolError"
