"""The ``httpx2.Request`` of a provider turn, with the shared client's per-turn work done once.

The shared client's default headers merged with a wire's, the ``Host`` header in front and the URL parsed are
the same on every turn, so they are kept per client, header set and URL; a turn adds only its body and
``Content-Length``. What httpx2 would add itself (cookies in the jar, a wire's own ``Host``/``Content-Length``/
``Transfer-Encoding``/``Cookie``) sends the request down httpx2's own path. httpx2 is imported at the first
request, never with this module.
"""

from __future__ import annotations

import functools
import re
import weakref
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import httpx2

CONNECT_TIMEOUT_S = 5.0
_HTTP_WHITESPACE = " \t\r\n"
_TOKEN = re.compile(r"[-!#$%&'*+.^_`|~0-9a-zA-Z]+")  # RFC 9110's token: what a header name may be


class HeaderValueError(ValueError):
    """A header HTTP cannot carry: a name that is not a token, a line break or NUL in a value, or a character
    beyond Latin-1. The text names the header, never its value (it may be a key)."""


def build_request(client: httpx2.AsyncClient, shared: bool, method: str, url: str, content: bytes,
                   headers: dict[str, str], timeout: float) -> httpx2.Request:
    """``client.build_request`` with the shared client's part done once: its default headers merged with the
    wire's (the same every turn) as httpx2 merges them, behind the ``Host`` header httpx2 puts first, the URL
    parsed once; per request only ``Content-Length`` is added, where httpx2 adds it. With cookies in the
    client's jar, httpx2 adds them. An injected client may carry its own base URL, headers or parameters: it
    builds the request itself."""
    import httpx2

    if not shared:
        return client.build_request(method, parsed_url(url), content=content, headers=sendable(headers),
                                    timeout=httpx2_timeout(timeout))
    timeouts = {"connect": CONNECT_TIMEOUT_S, "read": timeout, "write": timeout, "pool": timeout}
    parsed = parsed_url(url)
    template = _request_headers(client, headers, parsed)
    if template is None or client.cookies.jar:
        return httpx2.Request(method, parsed, content=content, headers=_merged_headers(client, headers),
                              cookies=client.cookies, extensions={"timeout": timeouts})
    request_headers = httpx2.Headers(template)
    request_headers["Content-Length"] = str(len(content))
    request = httpx2.Request(method, parsed, headers=request_headers, stream=httpx2.ByteStream(content),
                             extensions={"timeout": timeouts})
    request.read()  # as httpx2 does for a body given whole: ``request.content`` is there
    return request


def httpx2_timeout(timeout: float) -> httpx2.Timeout:
    """The request timeouts: ``timeout`` per read, write and pool wait, ``CONNECT_TIMEOUT_S`` to connect."""
    import httpx2

    return httpx2.Timeout(timeout, connect=CONNECT_TIMEOUT_S)


def sendable(headers: dict[str, str]) -> list[tuple[bytes, bytes]]:
    """``headers`` as fetch (Pi) sends them: each value without surrounding whitespace, text beyond ASCII as
    its Latin-1 bytes; raises ``HeaderValueError`` for what no HTTP request can carry."""
    out: list[tuple[bytes, bytes]] = []
    for name, value in headers.items():
        if not name.isascii() or not _TOKEN.fullmatch(name):
            raise HeaderValueError(f"Header name {name!r} cannot be sent: HTTP header names are ASCII letters, "
                                   "digits and -!#$%&'*+.^_`|~, without spaces")
        value = value.strip(_HTTP_WHITESPACE)
        if "\n" in value or "\r" in value:
            raise HeaderValueError(f"Header {name} cannot be sent: its value contains a line break")
        if "\x00" in value:
            raise HeaderValueError(f"Header {name} cannot be sent: its value contains a NUL character")
        try:
            out.append((name.encode("ascii"), value.encode("latin-1")))
        except UnicodeEncodeError as err:
            char = value[err.start]
            raise HeaderValueError(f"Header {name} cannot be sent: its value contains \"{char}\" (U+{ord(char):04X}) "
                                   f"at position {err.start}; HTTP header values are limited to Latin-1 "
                                   "characters") from None
    return out


def _merged_headers(client: httpx2.AsyncClient, headers: dict[str, str]) -> httpx2.Headers:
    """The client's default headers overridden by a wire's, merged once per client and header set."""
    import httpx2

    known = _MERGED.setdefault(client, {})
    key = tuple(headers.items())
    merged = known.get(key)
    if merged is None:
        if len(known) >= 64:  # headers that change every request (none of ours do) must not pile up
            known.clear()
        merged = httpx2.Headers(client.headers)
        merged.update(sendable(headers))
        known[key] = merged
    return merged


def _request_headers(client: httpx2.AsyncClient, headers: dict[str, str], url: httpx2.URL) -> httpx2.Headers | None:
    """``Host`` then the merged headers, as httpx2 orders them, once per client, header set and URL; ``None``
    when the wire sets a header httpx2 would otherwise fill in (it builds those requests itself)."""
    import httpx2

    known = _TEMPLATES.setdefault(client, {})
    key = (tuple(headers.items()), url)
    if key in known:
        return known[key]
    if len(known) >= 64:
        known.clear()
    merged = _merged_headers(client, headers)
    own = {"host", "content-length", "transfer-encoding", "cookie"} & {name.lower() for name in merged}
    template = known[key] = None if own or not url.host else httpx2.Headers([(b"Host", url.netloc), *merged.raw])
    return template


_MERGED: weakref.WeakKeyDictionary[httpx2.AsyncClient, dict[tuple[tuple[str, str], ...], httpx2.Headers]] = (
    weakref.WeakKeyDictionary())
_TEMPLATES: weakref.WeakKeyDictionary[httpx2.AsyncClient, dict[tuple[Any, ...], httpx2.Headers | None]] = (
    weakref.WeakKeyDictionary())


@functools.lru_cache(maxsize=64)
def parsed_url(url: str) -> httpx2.URL:
    """A wire's URL, parsed once (the same one on every turn; httpx2 URLs are immutable)."""
    import httpx2

    return httpx2.URL(url)
