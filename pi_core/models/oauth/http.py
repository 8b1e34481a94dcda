"""The HTTP side of sign-in: token and device-code requests with a timeout and errors that name the URL.

``PI_OAUTH_SERVER`` (e.g. ``http://127.0.0.1:8765``) sends every authorization-server request, and the
page the browser opens, to that server instead, keeping host and path: ``https://auth.openai.com/oauth/token``
becomes ``http://127.0.0.1:8765/auth.openai.com/oauth/token``. The test suite's fake authorization server
relies on it; it also suits an inspecting proxy. ``PI_OAUTH_TIMEOUT`` (seconds, default 30) bounds each
request.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode, urlsplit

from pi_core.models.oauth import LoginCancelled, OAuthError

SERVER_ENV = "PI_OAUTH_SERVER"
TIMEOUT_ENV = "PI_OAUTH_TIMEOUT"
DEFAULT_TIMEOUT_S = 30.0
_LOOPBACK = ("127.0.0.1", "localhost", "::1", "[::1]")


def endpoint(url: str) -> str:
    """``url``, or the same host and path under ``PI_OAUTH_SERVER`` when that is set."""
    server = os.environ.get(SERVER_ENV, "").strip().rstrip("/")
    if not server:
        return url
    parts = urlsplit(url)
    return f"{server}/{parts.netloc}{parts.path}" + (f"?{parts.query}" if parts.query else "")


def with_query(url: str, params: dict[str, str]) -> str:
    return f"{url}{'&' if '?' in url else '?'}{urlencode(params)}"


def timeout_s() -> float:
    try:
        value = float(os.environ.get(TIMEOUT_ENV, "") or DEFAULT_TIMEOUT_S)
    except ValueError:
        return DEFAULT_TIMEOUT_S
    return value if value > 0 else DEFAULT_TIMEOUT_S


def trusted_url(url: object) -> str | None:
    """``url`` when it is safe to show and open: https, or http on a loopback address; else None."""
    if not isinstance(url, str):
        return None
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    if parts.scheme == "https" and parts.netloc:
        return url
    if parts.scheme == "http" and (parts.hostname or "") in _LOOPBACK:
        return url
    return None


@dataclass
class Reply:
    status: int
    text: str
    url: str
    headers: dict[str, str] = field(default_factory=dict)  # lower-case names

    @property
    def date(self) -> str | None:
        return self.headers.get("date")

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300

    def json(self) -> dict[str, Any]:  # open: an HTTP JSON body
        """The body as a JSON object; ``{}`` when it is not one."""
        try:
            parsed = json.loads(self.text)
        except ValueError:
            return {}
        return parsed if isinstance(parsed, dict) else {}

    def detail(self) -> str:
        """What went wrong, from an OAuth error body (``error``/``error_description``) or the raw text."""
        body = self.json()
        error = body.get("error")
        if isinstance(error, dict):
            error = error.get("message") or error.get("code")
        parts = [str(p) for p in (error, body.get("error_description") or body.get("message")) if p]
        return ": ".join(parts) if parts else self.text.strip()[:300]


async def request(method: str, url: str, *, what: str, form: dict[str, str] | None = None,
                  json_body: dict[str, Any] | None = None, headers: dict[str, str] | None = None) -> Reply:  # open: an HTTP JSON body
    """Send one request to an authorization server. Network failures raise OAuthError naming ``what`` and URL."""
    import asyncio

    import httpx2

    sent = {"accept": "application/json", **(headers or {})}
    limit = timeout_s()
    try:
        async with httpx2.AsyncClient(timeout=httpx2.Timeout(limit), follow_redirects=False) as client:
            response = await client.request(method, url, data=form, json=json_body, headers=sent)
    except asyncio.CancelledError:
        raise LoginCancelled() from None
    except httpx2.TimeoutException as err:
        raise OAuthError(f"{what} failed: {url} did not answer within {limit:g} s") from err
    except httpx2.HTTPError as err:
        reason = str(err) or type(err).__name__
        raise OAuthError(f"{what} failed: could not reach {url} ({reason})") from err
    return Reply(response.status_code, response.text, url, {k.lower(): v for k, v in response.headers.items()})
