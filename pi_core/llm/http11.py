"""HTTP/1.1 for one client connection, without I/O: the request head pi writes and the response it reads back.

The rules and the error texts are h11's (the parser under httpx2's own transport, driven as httpcore2 drives
it): the same header validation, body framing (``Content-Length``, chunked, read-to-close), keep-alive rules,
size limit on a response head, and the same ``RemoteProtocolError``/``LocalProtocolError`` messages for a
server that misbehaves (``tests/providers/test_http11_transport.py`` checks both side by side). Importing
h11 and building its event objects cost a print run more than the few requests it parses; this module is a
reader over one buffer.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import httpx2

MAX_HEAD_BYTES = 100 * 1024  # an unfinished response head (or chunk header) beyond this is refused
END = b""  # ``ResponseReader.body`` at the end of the body (the body's own data is never empty)

TOKEN = re.compile(rb"[-!#$%&'*+.^_`|~0-9a-zA-Z]+")
_FIELD_VALUE = re.compile(rb"(?:[^\x00\s]+(?:[ \t]+[^\x00\s]+)*)?")
_TARGET = re.compile(rb"[\x21-\x7e]+")
_HEADER_LINE = re.compile(rb"(?P<name>[-!#$%&'*+.^_`|~0-9a-zA-Z]+):[ \t]*"
                          rb"(?P<value>(?:[^\x00\s]+(?:[ \t]+[^\x00\s]+)*)?)[ \t]*")
_STATUS_LINE = re.compile(rb"HTTP/(?P<version>[0-9]\.[0-9]) (?P<status>[0-9]{3})"
                          rb"(?: (?P<reason>(?:[ \t]|[^\x00\s])*))?")
_CHUNK_HEADER = re.compile(rb"(?P<size>[0-9A-Fa-f]{1,20})(?:;.*)?[ \t]*\r\n")
_DIGITS = re.compile(rb"[0-9]+")
_FOLD = re.compile(rb"[ \t]+")
_BLANK_LINE = re.compile(rb"\n\r?\n")
_CONTENT_LENGTH_MAX_DIGITS = 20
_VALID_FIELDS: set[tuple[bytes, bytes]] = set()  # request header fields already checked

Headers = list[tuple[bytes, bytes]]


def _local(message: str) -> httpx2.LocalProtocolError:
    return httpx2.LocalProtocolError(message)


def _remote(message: str) -> httpx2.RemoteProtocolError:
    return httpx2.RemoteProtocolError(message)


def _normalized(headers: Sequence[tuple[bytes, bytes]], error: type[httpx2.ProtocolError]) -> list[tuple[bytes, bytes, bytes]]:
    """(raw name, lower-case name, value) with h11's checks of Content-Length and Transfer-Encoding."""
    out: list[tuple[bytes, bytes, bytes]] = []
    seen_length: bytes | None = None
    chunked = False
    for raw_name, value in headers:
        name = raw_name.lower()
        if name == b"content-length":
            lengths = {length.strip() for length in value.split(b",")}
            if len(lengths) != 1:
                raise error("conflicting Content-Length headers")
            value = lengths.pop()
            if not _DIGITS.fullmatch(value) or len(value) > _CONTENT_LENGTH_MAX_DIGITS:
                raise error("bad Content-Length")
            if seen_length is None:
                seen_length = value
            elif seen_length != value:
                raise error("conflicting Content-Length headers")
            else:
                continue
        elif name == b"transfer-encoding":
            if chunked:
                raise error("multiple Transfer-Encoding headers")
            value = value.lower()
            if value != b"chunked":
                raise error("Only Transfer-Encoding: chunked is supported")
            chunked = True
        out.append((raw_name, name, value))
    return out


def _comma_values(headers: list[tuple[bytes, bytes, bytes]], wanted: bytes) -> list[bytes]:
    return [part for _, name, value in headers if name == wanted
            for part in (piece.strip() for piece in value.lower().split(b",")) if part]


def request_head(method: bytes, target: bytes, headers: Sequence[tuple[bytes, bytes]]) -> tuple[bytes, int | None, bool]:
    """The request's head, its body length (``None``: chunked) and whether the connection may be kept after it;
    raises httpx2's ``LocalProtocolError`` for what h11 refuses to send."""
    for field in headers:
        if field in _VALID_FIELDS:
            continue
        name, value = field
        if not TOKEN.fullmatch(name):
            raise _local(f"Illegal header name {name!r}")
        if not _FIELD_VALUE.fullmatch(value):
            raise _local(f"Illegal header value {value!r}")
        if len(_VALID_FIELDS) < 256 and name.lower() != b"content-length":  # the same every turn but the length
            _VALID_FIELDS.add(field)
    fields = _normalized(headers, httpx2.LocalProtocolError)
    hosts = [field for field in fields if field[1] == b"host"]
    if not hosts:
        raise _local("Missing mandatory Host: header")
    if len(hosts) > 1:
        raise _local("Found multiple Host: headers")
    if not TOKEN.fullmatch(method):
        raise _local("Illegal method characters")
    if not _TARGET.fullmatch(target):
        raise _local("Illegal target characters")
    parts = [b"%s %s HTTP/1.1\r\n" % (method, target)]
    parts += [b"%s: %s\r\n" % (raw, value) for raw, _, value in hosts]  # h11 writes Host first
    length: int | None = 0
    for raw, name, value in fields:
        if name != b"host":
            parts.append(b"%s: %s\r\n" % (raw, value))
        if name == b"transfer-encoding":
            length = None
        elif name == b"content-length" and length is not None:
            length = int(value)
    parts.append(b"\r\n")
    return b"".join(parts), length, b"close" not in _comma_values(fields, b"connection")


def chunk(data: bytes) -> bytes:
    """One chunk of a chunked request body."""
    return b"%x\r\n%s\r\n" % (len(data), data) if data else b""


LAST_CHUNK = b"0\r\n\r\n"


class Head:
    """A final response's status line and headers."""

    __slots__ = ("headers", "http_version", "reason", "status")

    def __init__(self, status: int, reason: bytes, http_version: bytes, headers: Headers) -> None:
        self.status = status
        self.reason = reason
        self.http_version = http_version
        self.headers = headers


class ResponseReader:
    """The response to one request, parsed from the bytes ``feed`` gives it (``feed(b"")``: the peer closed).

    ``head()`` returns the final response's head once it is complete (interim 1xx answers are skipped), then
    ``body()`` returns body bytes as they come, ``END`` at the end of the body; both return ``None`` when they
    need more bytes. ``reusable`` says, after ``END``, whether the connection may carry the next request."""

    def __init__(self, method: bytes, keep_alive: bool) -> None:
        self.buffer = bytearray()
        self.closed = False
        self._head_request = method == b"HEAD"
        self._connect = method == b"CONNECT"
        self._keep_alive = keep_alive
        self._search = 0  # where the blank-line search resumes
        self._framing = ""  # "length", "chunked" or "close" once the head is read
        self._length = self._left = 0
        self._discard = b""  # the CRLF still expected after a chunk's data
        self._trailer = False
        self.done = False

    def feed(self, data: bytes) -> None:
        if data:
            self.buffer += data
        else:
            self.closed = True

    @property
    def reusable(self) -> bool:
        return self.done and self._keep_alive and self._framing != "close" and not self.buffer

    def _take(self, count: int) -> bytearray:
        out = self.buffer[:count]
        del self.buffer[:count]
        self._search = 0
        return out

    def _lines(self) -> list[bytearray] | None:
        """Everything up to the first blank line, as lines without their line ends (bare LF accepted)."""
        buffer = self.buffer
        if buffer[:1] == b"\n":
            self._take(1)
            return []
        if buffer[:2] == b"\r\n":
            self._take(2)
            return []
        match = _BLANK_LINE.search(buffer, self._search)
        if match is None:
            self._search = max(0, len(buffer) - 2)
            return None
        lines = self._take(match.end()).split(b"\n")
        for line in lines:
            if line.endswith(b"\r"):
                del line[-1]
        del lines[-2:]
        return lines

    def _need(self, head: bool = False) -> None:
        """No complete event in the buffer: h11's checks before waiting for more bytes."""
        if head and self.buffer and self.buffer[0] < 0x21:
            raise _remote("illegal request line")  # sic: h11's text for a response that starts with junk
        if len(self.buffer) > MAX_HEAD_BYTES:
            raise _remote("Receive buffer too long")
        if self.closed:
            raise _remote("Server disconnected without sending a response." if head
                          else "peer unexpectedly closed connection")

    def head(self) -> Head | None:
        while True:
            lines = self._lines()
            if lines is None:
                self._need(head=True)
                return None
            if not lines:
                raise _remote("no response line received")
            status_line = _STATUS_LINE.fullmatch(lines[0])
            if status_line is None:
                raise _remote(f"illegal status line: {lines[0]!r}")
            fields = _normalized(_header_lines(lines[1:]), httpx2.RemoteProtocolError)
            status = int(status_line["status"])
            if status == 101:
                raise _remote("Server switched protocols, which this transport does not support.")
            if status >= 200:
                break
        version = status_line["version"]
        if b"close" in _comma_values(fields, b"connection") or version < b"1.1":
            self._keep_alive = False
        if status in (204, 304) or self._head_request or (self._connect and status < 300):
            self._framing, self._length = "length", 0
        elif _comma_values(fields, b"transfer-encoding"):
            self._framing = "chunked"
        else:
            lengths = [value for _, name, value in fields if name == b"content-length"]
            if lengths:
                self._framing, self._length = "length", int(lengths[0])
            else:
                self._framing = "close"
        self._left = self._length
        return Head(status, status_line["reason"] or b"", b"HTTP/" + version,
                    [(raw, value) for raw, _, value in fields])

    def body(self) -> bytes | None:
        framing = self._framing
        if framing == "length":
            if not self._left:
                self.done = True
                return END
            if self.buffer:
                data = self._take(self._left)
                self._left -= len(data)
                return bytes(data)
            if self.closed:
                raise _remote("peer closed connection without sending complete message body "
                              f"(received {self._length - self._left} bytes, expected {self._length})")
            return None
        if framing == "close":
            if self.buffer:
                return bytes(self._take(len(self.buffer)))
            if self.closed:
                self.done = True
                return END
            return None
        return self._chunked()

    def _chunked(self) -> bytes | None:
        while True:
            if self._trailer:
                lines = self._lines()
                if lines is None:
                    self._chunked_need()
                    return None
                _normalized(_header_lines(lines), httpx2.RemoteProtocolError)
                self.done = True
                return END
            if self._discard:
                if not self.buffer:
                    self._chunked_need()
                    return None
                data = self._take(len(self._discard))
                if data != self._discard[:len(data)]:
                    raise _remote(f"malformed chunk footer: {data!r} (expected {self._discard!r})")
                self._discard = self._discard[len(data):]
                if self._discard:
                    self._chunked_need()
                    return None
            if not self._left:
                end = self.buffer.find(b"\r\n", max(0, self._search - 1))
                if end < 0:
                    self._search = len(self.buffer)
                    self._chunked_need()
                    return None
                line = self._take(end + 2)
                header = _CHUNK_HEADER.fullmatch(line)
                if header is None:
                    raise _remote(f"illegal chunk header: {line!r}")
                self._left = int(header["size"], 16)
                if not self._left:
                    self._trailer = True
                    continue
            if not self.buffer:
                self._chunked_need()
                return None
            data = self._take(self._left)
            self._left -= len(data)
            if not self._left:
                self._discard = b"\r\n"
            return bytes(data)

    def _chunked_need(self) -> None:
        if self.closed and not self.buffer:
            raise _remote("peer closed connection without sending complete message body (incomplete chunked read)")
        self._need()


def _header_lines(lines: list[bytearray]) -> Headers:
    """Header lines (obsolete line folding joined) as (name, value), h11's validation and texts."""
    unfolded: list[bytearray] = []
    for line in lines:
        fold = _FOLD.match(line)
        if fold is None:
            unfolded.append(line)
            continue
        if not unfolded:
            raise _remote("continuation line at start of headers")
        unfolded[-1] += b" " + line[fold.end():]
    out: Headers = []
    for line in unfolded:
        match = _HEADER_LINE.fullmatch(line)
        if match is None:
            raise _remote(f"illegal header line: {line!r}")
        out.append((match["name"], match["value"]))
    return out
