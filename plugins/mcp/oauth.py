"""OAuth for remote MCP servers with the SDK's ``OAuthClientProvider``: stored tokens, refresh, and sign-in.

Credentials live in ``<agentDir>/mcp-auth.json`` (mode 0600), per server name and URL. In a session the provider
never opens a browser: a server that needs a sign-in shows "needs sign-in" until ``pi mcp login`` (or
``/mcp login``) runs the authorization-code flow with PKCE, a loopback redirect and dynamic client registration
(or a configured client). The authorization-server metadata found at sign-in is kept with the tokens, so an
expired token is refreshed at the right token endpoint after a restart.
"""

from __future__ import annotations

import asyncio
import json
import os
import stat
import time
import webbrowser
from collections.abc import AsyncGenerator, Awaitable, Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, parse_qsl, urlencode, urlparse, urlunparse

import httpx2
from mcp.client.auth import OAuthClientProvider
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthMetadata,
    OAuthToken,
)
from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
from pi_plugins.mcp.errors import SignInRequired, describe_error, root_cause
from pi_plugins.mcp.expand import expand_value

from pi_core.errors import PiError
from pi_core.toolkit.private_files import file_lock, lock_path, write_private_json

if TYPE_CHECKING:
    from pi_plugins.mcp.config import OAuthSettings, ServerEntry
    from pi_plugins.mcp.connection import ServerConnection

CLIENT_NAME = "pi"
ASM_PATHS = ("/.well-known/oauth-authorization-server", "/.well-known/openid-configuration")


class SignInError(PiError):
    pass


class SignInCancelled(SignInError):
    pass


# --- storage --------------------------------------------------------------------------------------


class CredentialStore:
    """``mcp-auth.json``: ``{"<server>": {"<url>": {tokens, expiresAt, clientInfo, authServerMetadata}}}``."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def read(self) -> dict[str, Any]:
        try:
            mode = self.path.stat().st_mode
        except FileNotFoundError:
            return {}
        if os.name == "posix" and mode & (stat.S_IRWXG | stat.S_IRWXO):
            raise SignInError(f"{self.path} is readable by other users (mode {stat.S_IMODE(mode):o}). "
                              f"Run: chmod 600 {self.path}")
        try:
            data = json.loads(self.path.read_text(encoding="utf-8") or "{}")
        except (OSError, ValueError) as err:
            raise SignInError(f"could not read {self.path}: {err}") from None
        return data if isinstance(data, dict) else {}

    def get(self, server: str, url: str) -> dict[str, Any]:
        entry = self.read().get(server, {}).get(url)
        return entry if isinstance(entry, dict) else {}

    def update(self, server: str, url: str, **fields: Any) -> None:
        # Under the lock, re-read: another pi that saved its server's refreshed tokens meanwhile keeps them.
        with file_lock(lock_path(self.path)):
            data = self.read()
            record = data.setdefault(server, {}).setdefault(url, {})
            record.update({k: v for k, v in fields.items() if v is not None})
            write_private_json(self.path, data)

    def remove(self, server: str, url: str) -> bool:
        with file_lock(lock_path(self.path)):
            data = self.read()
            if url not in data.get(server, {}):
                return False
            del data[server][url]
            if not data[server]:
                del data[server]
            write_private_json(self.path, data)
            return True


class _Storage:
    """The SDK's TokenStorage over one server's record; it also keeps what a refresh needs after a restart."""

    def __init__(self, store: CredentialStore, server: str, url: str) -> None:
        self.store, self.server, self.url = store, server, url
        self.provider: PiOAuthProvider | None = None

    async def get_tokens(self) -> OAuthToken | None:
        raw = self.store.get(self.server, self.url).get("tokens")
        return OAuthToken.model_validate(raw) if raw else None

    async def set_tokens(self, tokens: OAuthToken) -> None:
        context = self.provider.context if self.provider else None
        metadata = context.oauth_metadata.model_dump(mode="json", exclude_none=True) \
            if context is not None and context.oauth_metadata is not None else None
        self.store.update(self.server, self.url, tokens=tokens.model_dump(mode="json", exclude_none=True),
                          expiresAt=context.token_expiry_time if context is not None else None,
                          authServerMetadata=metadata)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        raw = self.store.get(self.server, self.url).get("clientInfo")
        return OAuthClientInformationFull.model_validate(raw) if raw else None

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.store.update(self.server, self.url, clientInfo=client_info.model_dump(mode="json", exclude_none=True))


# --- the provider ---------------------------------------------------------------------------------


class PiOAuthProvider(OAuthClientProvider):
    """The SDK provider plus what survives a restart (token expiry, authorization-server metadata) and
    ``authServerMetadataUrl``: the configured document is used instead of discovery and trusted as configured."""

    def __init__(self, server_url: str, client_metadata: OAuthClientMetadata, *, storage: _Storage,
                 redirect_handler: Callable[[str], Awaitable[None]],
                 callback_handler: Callable[[], Awaitable[AuthorizationCodeResult]],
                 metadata_url: str | None = None, interactive: bool = True, sign_in_text: str = "") -> None:
        super().__init__(server_url, client_metadata, storage, redirect_handler=redirect_handler,
                         callback_handler=callback_handler)
        storage.provider = self
        self.interactive = interactive
        self._sign_in_text = sign_in_text
        self._pi_storage = storage
        self._metadata_url = metadata_url
        self._configured_issuer: str | None = None

    async def _initialize(self) -> None:
        await super()._initialize()
        record = self._pi_storage.store.get(self._pi_storage.server, self._pi_storage.url)
        if isinstance(record.get("expiresAt"), (int, float)):
            self.context.token_expiry_time = float(record["expiresAt"])
        if record.get("authServerMetadata") and self.context.oauth_metadata is None:
            self.context.oauth_metadata = OAuthMetadata.model_validate(record["authServerMetadata"])
        if self._metadata_url and self._configured_issuer is None:
            async with httpx2.AsyncClient(timeout=30.0) as client:
                response = await client.get(self._metadata_url)
                response.raise_for_status()
            document = OAuthMetadata.model_validate_json(response.content)
            self._configured_issuer = str(document.issuer)

    def _select_authorization_server(self, advertised: list[str]) -> str:
        return self._configured_issuer or super()._select_authorization_server(advertised)

    def _expected_issuer(self) -> str:
        return self._configured_issuer or super()._expected_issuer()

    def _auth_flow(self, request: httpx2.Request) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        if not self.interactive:
            return self._session_flow(request)
        flow = super()._auth_flow(request)
        return self._with_configured_metadata(flow) if self._metadata_url else flow

    async def _session_flow(self, request: httpx2.Request) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        """In a session: stored tokens, refreshed when expired or rejected; a needed sign-in is reported, never
        started (no discovery, no registration, no browser)."""
        async with self.context.lock:
            if not self._initialized:
                await self._initialize()
            self.context.protocol_version = request.headers.get(MCP_PROTOCOL_VERSION_HEADER)
            refreshed = False
            if not self.context.is_token_valid() and self.context.can_refresh_token():
                refreshed = await self._handle_refresh_response((yield await self._refresh_token()))
            if self.context.current_tokens is not None and self.context.current_tokens.access_token:
                self._add_auth_header(request)
            response = yield request
            if response.status_code == 401 and not refreshed and self.context.can_refresh_token() \
                    and await self._handle_refresh_response((yield await self._refresh_token())):
                self._add_auth_header(request)
                response = yield request
            insufficient = response.status_code == 403 and "insufficient_scope" in \
                response.headers.get("www-authenticate", "")
            if response.status_code == 401 or insufficient:
                raise SignInRequired(self._sign_in_text)

    async def _with_configured_metadata(self, flow: AsyncGenerator[httpx2.Request, httpx2.Response]
                                        ) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        """The SDK's sign-in flow with authorization-server discovery sent to the configured document."""
        assert self._metadata_url is not None
        try:
            outgoing = await flow.__anext__()
            while True:
                if outgoing.method == "GET" and any(p in outgoing.url.path for p in ASM_PATHS):
                    outgoing = httpx2.Request("GET", self._metadata_url, headers=dict(outgoing.headers))
                response = yield outgoing
                outgoing = await flow.asend(response)
        except StopAsyncIteration:
            return
        finally:
            await flow.aclose()


def redirect_uri(settings: OAuthSettings | None, port: int) -> str:
    """``callbackUrl`` as written (with the port added when it has none), else the loopback ``/callback``."""
    if settings is not None and settings.callback_url:
        parsed = urlparse(settings.callback_url)
        if parsed.port:
            return settings.callback_url
        host = parsed.hostname or "127.0.0.1"
        host = f"[{host}]" if ":" in host else host
        return urlunparse(parsed._replace(netloc=f"{host}:{port}"))
    return f"http://127.0.0.1:{port}/callback"


def _client_metadata(settings: OAuthSettings | None, redirect: str) -> OAuthClientMetadata:
    secret = settings is not None and settings.client_secret is not None
    return OAuthClientMetadata(
        redirect_uris=[redirect],  # type: ignore[list-item]
        client_name=(settings.client_name if settings and settings.client_name else CLIENT_NAME),
        scope=settings.scope if settings else None,
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method="client_secret_post" if secret else "none",
    )


async def _seed_client(storage: _Storage, entry: ServerEntry, redirect: str) -> None:
    """A configured ``clientId`` replaces registration; a registered client is kept while its redirect matches."""
    settings = entry.config.oauth
    known = await storage.get_client_info()
    if settings is not None and settings.client_id:
        secret = expand_value(settings.client_secret, f'MCP server "{entry.name}" oauth.clientSecret') \
            if settings.client_secret else None
        if known is None or known.client_id != settings.client_id or known.client_secret != secret:
            await storage.set_client_info(OAuthClientInformationFull(
                client_id=settings.client_id, client_secret=secret, redirect_uris=[redirect],  # type: ignore[list-item]
                token_endpoint_auth_method="client_secret_post" if secret else "none"))
        return
    if known is not None and [str(u) for u in known.redirect_uris or []] != [redirect]:
        storage.store.update(storage.server, storage.url, clientInfo={})


def _provider(entry: ServerEntry, store: CredentialStore, redirect: str,
              redirect_handler: Callable[[str], Awaitable[None]],
              callback_handler: Callable[[], Awaitable[AuthorizationCodeResult]], *,
              interactive: bool) -> PiOAuthProvider:
    settings = entry.config.oauth
    storage = _Storage(store, entry.name, entry.config.url)
    return PiOAuthProvider(entry.config.url, _client_metadata(settings, redirect), storage=storage,
                           redirect_handler=redirect_handler, callback_handler=callback_handler,
                           metadata_url=settings.auth_server_metadata_url if settings else None,
                           interactive=interactive, sign_in_text=sign_in_text(entry))


def sign_in_text(entry: ServerEntry) -> str:
    return f'MCP server "{entry.name}" requires sign-in. Run /mcp login {entry.name} or pi mcp login {entry.name}.'



def session_auth(agent_dir: Path) -> Callable[[ServerConnection], httpx2.Auth | None]:
    """Auth for connections in a session: stored tokens and refresh only; a needed sign-in is reported."""
    store = CredentialStore(agent_dir / "mcp-auth.json")

    def factory(connection: ServerConnection) -> httpx2.Auth | None:
        entry = connection.entry
        record = store.get(entry.name, entry.config.url)
        redirects = [str(u) for u in (record.get("clientInfo") or {}).get("redirect_uris") or []]
        redirect = redirects[0] if redirects else redirect_uri(entry.config.oauth, 0)

        async def needs_sign_in(_url: str) -> None:
            raise SignInRequired(sign_in_text(entry))

        async def never() -> AuthorizationCodeResult:
            raise SignInRequired(sign_in_text(entry))

        return _provider(entry, store, redirect, needs_sign_in, never, interactive=False)

    return factory


# --- sign-in --------------------------------------------------------------------------------------


class _Callback:
    """A one-shot loopback HTTP server that receives the authorization redirect."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.result: asyncio.Future[AuthorizationCodeResult] = asyncio.get_running_loop().create_future()
        self.server: asyncio.Server | None = None

    async def start(self, host: str, port: int) -> int:
        self.server = await asyncio.start_server(self._handle, host, port)
        return int(self.server.sockets[0].getsockname()[1])

    def accept(self, url: str) -> bool:
        """A pasted redirect URL (the browser ran on another machine)."""
        parsed = urlparse(url.strip())
        query = parse_qs(parsed.query)
        if "code" not in query and "error" not in query:
            return False
        self._finish(query)
        return True

    def _finish(self, query: dict[str, list[str]]) -> None:
        if self.result.done():
            return
        if "error" in query:
            reason = query.get("error_description", query["error"])[0]
            self.result.set_exception(SignInError(f"the authorization server answered: {reason}"))
            return
        self.result.set_result(AuthorizationCodeResult(code=query["code"][0], state=query.get("state", [None])[0],
                                                       iss=query.get("iss", [None])[0]))

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
            target = head.split(b" ", 2)[1].decode("latin-1")
            parsed = urlparse(target)
            ok = parsed.path == self.path and ("code" in parse_qs(parsed.query) or "error" in parse_qs(parsed.query))
            if ok:
                self._finish(parse_qs(parsed.query))
            body = (b"Signed in. You can close this window and return to pi." if ok
                    else b"This is pi's sign-in callback; nothing to do here.")
            writer.write(b"HTTP/1.1 " + (b"200 OK" if ok else b"404 Not Found")
                         + b"\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: "
                         + str(len(body)).encode() + b"\r\nConnection: close\r\n\r\n" + body)
            await writer.drain()
        except (TimeoutError, OSError, asyncio.IncompleteReadError, IndexError):
            pass
        finally:
            writer.close()

    def close(self) -> None:
        if self.server is not None:
            self.server.close()


def _with_scope(url: str, scope: str | None) -> str:
    """Add the configured scope to the one the SDK chose (servers that advertise none leave it empty)."""
    if not scope:
        return url
    parsed = urlparse(url)
    query = parse_qsl(parsed.query, keep_blank_values=True)
    current = next((v for k, v in query if k == "scope"), "")
    merged = " ".join(dict.fromkeys([*scope.split(), *current.split()]))
    query = [(k, v) for k, v in query if k != "scope"] + [("scope", merged)]
    return urlunparse(parsed._replace(query=urlencode(query)))


async def sign_in(entry: ServerEntry, agent_dir: Path, *, show: Callable[[str], None],
                  paste: Callable[[_Callback], Coroutine[Any, Any, None]] | None = None, timeout: float = 300.0) -> None:
    """Run the browser sign-in for one server and store its tokens. Raises SignInError / SignInCancelled."""
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    settings = entry.config.oauth
    parsed_callback = urlparse(settings.callback_url) if settings and settings.callback_url else None
    path = parsed_callback.path or "/callback" if parsed_callback else "/callback"
    host = (parsed_callback.hostname if parsed_callback else None) or "127.0.0.1"
    port = (parsed_callback.port if parsed_callback else None) or (settings.callback_port if settings else None) or 0
    callback = _Callback(path)
    try:
        bound = await callback.start("::1" if host in ("::1", "[::1]") else host, port)
    except OSError as err:
        raise SignInError(f"could not listen for the sign-in callback on {host}:{port}: {err.strerror or err}") \
            from None
    store = CredentialStore(agent_dir / "mcp-auth.json")
    redirect = redirect_uri(settings, bound)
    storage = _Storage(store, entry.name, entry.config.url)
    await _seed_client(storage, entry, redirect)
    paster: asyncio.Task[None] | None = None

    async def on_redirect(url: str) -> None:
        nonlocal paster
        url = _with_scope(url, settings.scope if settings else None)
        show(url)
        try:  # in a thread: a browser launcher may wait, and the callback is served by this loop
            await asyncio.to_thread(webbrowser.open, url)
        except webbrowser.Error:
            pass
        if paste is not None:
            paster = asyncio.get_running_loop().create_task(paste(callback))

    async def on_callback() -> AuthorizationCodeResult:
        return await callback.result

    provider = _provider(entry, store, redirect, on_redirect, on_callback, interactive=True)
    headers = {k: expand_value(v, f'MCP server "{entry.name}" header "{k}"') for k, v in entry.config.headers.items()}
    try:
        async with asyncio.timeout(timeout), \
                httpx2.AsyncClient(headers=headers, auth=provider, timeout=30.0) as http, \
                Client(streamable_http_client(entry.config.url, http_client=http), cache=None) as client:
            await client.list_tools()
    except TimeoutError:
        raise SignInCancelled(f"not completed within {timeout:g} seconds") from None
    except SignInError:
        raise
    except Exception as err:  # noqa: BLE001 - the flow's failures are reported as one sign-in error
        cause = root_cause(err)
        if isinstance(cause, SignInError):
            raise cause from None
        raise SignInError(describe_error(cause)) from None
    finally:
        callback.close()
        if paster is not None:
            paster.cancel()
    if not (await storage.get_tokens()):
        raise SignInError("the server accepted the connection without a sign-in")


def sign_out(entry: ServerEntry, agent_dir: Path) -> bool:
    return CredentialStore(agent_dir / "mcp-auth.json").remove(entry.name, entry.config.url)


def _now() -> float:
    return time.time()
