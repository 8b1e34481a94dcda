"""What the transport sends and how it fails: ``WireRequest``, ``WireError`` (a ``ProviderError`` whose message ends
with ``origin_suffix``, so every provider error says where it went), ``StreamAborted``, and the WireError of
an HTTP error answer (``status_failure``: the wire's text, retry-after, ``x-should-retry``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pi_core.errors import ProviderError
from pi_core.llm.stream import ABORTED_TEXT

RETRYABLE_STATUSES = frozenset({408, 409, 429})


class StreamAborted(Exception):
    """``options.signal`` fired while the transport waited."""

    def __init__(self) -> None:
        super().__init__(ABORTED_TEXT)


class WireError(ProviderError):
    """A provider request failed; ``permanent`` means no layer should retry it (nothing can change)."""

    def __init__(self, message: str, *, status: int | None = None, retryable: bool = False,
                 retry_after: float | None = None, permanent: bool = False, body: str | None = None) -> None:
        super().__init__(message, status=status, retryable=retryable and not permanent, retry_after=retry_after)
        self.retryable: bool = retryable and not permanent
        self.permanent = permanent
        self.body = body


@dataclass(eq=False, repr=False)
class WireRequest:
    """One request: ``provider`` (the model's provider, named in errors), URL, headers, JSON body."""

    provider: str
    url: str
    headers: dict[str, str]
    body: Any  # open: a JSON value, or bytes sent as they are
    method: str = "POST"
    content_type: str = field(default="application/json")

    def origin(self) -> str:
        return origin_suffix(self.provider, self.method, self.url)


def origin_suffix(provider: str, method: str, url: str) -> str:
    """`` [provider NAME, METHOD URL]`` with the URL's credentials and query left out."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        if ":" in host:
            host = f"[{host}]"
        port = f":{parts.port}" if parts.port else ""
        shown = f"{parts.scheme}://{host}{port}{parts.path}" if parts.scheme else url.split("?", 1)[0]
    except ValueError:
        shown = url.split("?", 1)[0]
    return f" [provider {provider}, {method} {shown}]"


def default_status_text(status: int, body: str) -> str:
    """``{status} {body}``, or ``{status} status code (no body)``."""
    return f"{status} {body}" if body else f"{status} status code (no body)"


StatusText = Callable[[int, str], str]


def status_failure(status: int, body: str, headers: Mapping[str, str], request: WireRequest,
                   status_text: StatusText = default_status_text) -> WireError:
    """The WireError for an HTTP error answer: the wire's text, retry-after, ``x-should-retry``."""
    from pi_core.llm.retry import retry_after_from_headers

    should_retry = {"true": True, "false": False}.get((headers.get("x-should-retry") or "").lower())
    retryable = should_retry if should_retry is not None else (status in RETRYABLE_STATUSES or status >= 500)
    return WireError(status_text(status, body) + request.origin(), status=status, retryable=retryable,
                     retry_after=retry_after_from_headers(headers), body=body)


def failure_detail(err: BaseException) -> str:
    """The innermost useful description of a transport failure."""
    text = str(err)
    cause = err.__cause__ or err.__context__
    while cause is not None and not text:
        text, cause = str(cause), cause.__cause__ or cause.__context__
    return text or type(err).__name__
