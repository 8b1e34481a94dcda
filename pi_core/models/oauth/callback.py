"""The loopback redirect target of a browser sign-in, raced against a redirect URL the user pastes.

``CallbackServer.start`` listens on 127.0.0.1 (``PI_OAUTH_CALLBACK_HOST`` changes the host, e.g. to reach
pi inside a container) on the port the provider registered, or any free port. The first request to its
path with the expected ``state`` and a ``code`` settles it; a wrong state, an ``error`` parameter or a
second redirect get an explanatory page. ``wait_for_code`` returns whichever comes first: the browser's
redirect or what the user pastes (for a browser on another machine).
"""

from __future__ import annotations

import asyncio
import html
import os
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from pi_core.models.oauth import LoginCancelled, LoginUI, OAuthError

HOST_ENV = "PI_OAUTH_CALLBACK_HOST"


def _page(title: str, detail: str = "") -> bytes:
    extra = f"<p>{html.escape(detail)}</p>" if detail else ""
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>pi</title></head>"
            f"<body style='font-family:sans-serif;margin:3em'><h2>{html.escape(title)}</h2>{extra}</body></html>"
            ).encode()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    owner: CallbackServer


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass  # a redirect URL carries the authorization code: never write it anywhere

    def do_GET(self) -> None:
        status, page = self.server.owner.handle(self.path)
        body = _page(*page)
        self.send_response(status)
        self.send_header("content-type", "text/html; charset=utf-8")
        self.send_header("cache-control", "no-store")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class CallbackServer:
    """One sign-in's redirect target. Use ``await CallbackServer.start(...)``, then ``wait()``, then ``close()``."""

    def __init__(self, provider_name: str, path: str, state: str | None, host: str, port: int,
                 redirect_host: str | None) -> None:
        self.provider_name = provider_name
        self.path = path
        self.state = state
        self._loop = asyncio.get_running_loop()
        self._result: asyncio.Future[str] = self._loop.create_future()
        self._claimed = False
        self._server = _Server((host, port), _Handler)
        self._server.owner = self
        bound = self._server.server_address[1]
        shown = redirect_host or host
        self.redirect_uri = f"http://{f'[{shown}]' if ':' in shown else shown}:{bound}{path}"
        self._thread = threading.Thread(target=self._server.serve_forever, name="pi-oauth-callback", daemon=True)
        self._thread.start()

    @classmethod
    async def start(cls, provider_name: str, path: str, state: str | None, *, port: int = 0,
                    redirect_host: str | None = None) -> CallbackServer:
        """Listen on ``port`` (0: any free port); raises OSError when it cannot be bound."""
        host = os.environ.get(HOST_ENV, "").strip() or "127.0.0.1"
        return cls(provider_name, path, state, host, port, redirect_host)

    def handle(self, raw_path: str) -> tuple[int, tuple[str, str]]:
        """Answer one request to the server (runs in the server's thread)."""
        parts = urlsplit(raw_path)
        query = {k: v[0] for k, v in parse_qs(parts.query).items()}
        if parts.path != self.path:
            return 404, ("Callback route not found.", "")
        if self.state is not None and query.get("state") != self.state:
            return 400, ("State mismatch.", "This page does not belong to the sign-in pi is waiting for.")
        if self._claimed or self._result.done():
            return 409, ("This sign-in has already been handled.", "")
        if query.get("error"):
            detail = query.get("error_description") or query["error"]
            self._settle(error=OAuthError(f"{self.provider_name} authorization failed: {detail}"))
            return 400, (f"{self.provider_name} authorization failed.", detail)
        code = query.get("code")
        if not code:
            return 400, ("Missing authorization code.", "")
        self._claimed = True
        self._settle(code=code)
        return 200, (f"Signed in to {self.provider_name}.", "You may close this page and return to pi.")

    def _settle(self, code: str | None = None, error: BaseException | None = None) -> None:
        def apply() -> None:
            if self._result.done():
                return
            if error is not None:
                self._result.set_exception(error)
            else:
                self._result.set_result(code or "")

        self._loop.call_soon_threadsafe(apply)

    async def wait(self) -> str:
        """The authorization code the browser brought back."""
        return await asyncio.shield(self._result)

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        if not self._result.done():
            self._result.cancel()


@dataclass
class CodeInput:
    """What ``wait_for_code`` got: from the ``callback`` (``code``) or typed by the user (``code``, ``state``)."""

    source: str
    code: str | None
    state: str | None = None


def parse_pasted(text: str) -> tuple[str | None, str | None]:
    """``(code, state)`` from a pasted redirect URL, ``code#state``, a query string, or a bare code."""
    value = text.strip()
    if not value:
        return None, None
    parts = urlsplit(value)
    if parts.scheme and parts.netloc:
        query = {k: v[0] for k, v in parse_qs(parts.query).items()}
        if query.get("error"):
            raise OAuthError(f"authorization failed: {query.get('error_description') or query['error']}")
        return query.get("code"), query.get("state")
    if "#" in value:
        code, state = value.split("#", 1)
        return code or None, state or None
    if "code=" in value:
        query = {k: v[0] for k, v in parse_qs(value).items()}
        return query.get("code"), query.get("state")
    return value, None


async def wait_for_code(ui: LoginUI, callback: CallbackServer | None, message: str,
                        placeholder: str = "") -> CodeInput:
    """The browser's redirect or the user's paste, whichever comes first (only the paste without a server)."""
    paste = asyncio.ensure_future(ui.paste(message, placeholder))
    waiters: set[asyncio.Future[Any]] = {paste}
    redirect: asyncio.Future[str] | None = None
    if callback is not None:
        redirect = asyncio.ensure_future(callback.wait())
        waiters.add(redirect)
    try:
        done, _ = await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        raise LoginCancelled() from None
    finally:
        for task in waiters:
            if not task.done():
                task.cancel()
    if redirect is not None and redirect in done:
        return CodeInput("callback", redirect.result())
    code, state = parse_pasted(paste.result())
    return CodeInput("manual", code, state)
