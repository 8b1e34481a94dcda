"""The HTTP client every wire shares: one ``httpx2.AsyncClient`` per event loop and proxy/CA environment
(keep-alive between turns), proxies from ``HTTP(S)_PROXY``/``ALL_PROXY``/``NO_PROXY``, CA bundles through
``pi_core.llm.tls``; and what a failed connection means in that environment (``connect_failure``: a
refused proxy or local server is named, and never retried when nothing can be listening)."""

from __future__ import annotations

import asyncio
import functools
import weakref
from typing import TYPE_CHECKING

from pi_core.llm.environ import getenv_all
from pi_core.llm.wire import WireError, WireRequest, failure_detail

if TYPE_CHECKING:
    import ssl

    import httpx2

DEFAULT_TIMEOUT_S = 600.0
# Read by the client at creation: a change (a test's monkeypatch, a settings-applied proxy) needs a new client.
_ENV_KEYS = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "all_proxy",
             "no_proxy", "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "NODE_EXTRA_CA_CERTS")

_CLIENTS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple[str | None, ...], httpx2.AsyncClient]] = (
    weakref.WeakKeyDictionary())


def shared_client() -> httpx2.AsyncClient:
    """The running loop's client for the current proxy/CA environment (httpx2 pools belong to one loop)."""
    key = getenv_all(_ENV_KEYS)
    clients = _CLIENTS.setdefault(asyncio.get_running_loop(), {})
    client = clients.get(key)
    if client is None:
        socks = next((url for url in _proxies().values() if url.lower().startswith("socks")), None)
        if socks is not None:  # httpx2 would fail every request with "pip install httpx[socks]"
            raise WireError(f"Cannot use the SOCKS proxy {_without_credentials(socks)} named in the environment "
                            "(HTTPS_PROXY, HTTP_PROXY or ALL_PROXY): pi uses http:// proxies only", permanent=True)
        import httpx2

        # httpx2's own transport (httpcore2 on anyio, h11 framing; proxies and NO_PROXY from the environment).
        # HTTP/1.1 only, as Pi's fetch: see docs/providers.md for why not HTTP/2.
        client = httpx2.AsyncClient(verify=_tls_context(key), timeout=DEFAULT_TIMEOUT_S, follow_redirects=True)
        clients[key] = client
    return client


def preload_http() -> None:
    """Import what a first request runs on, for a caller with time to spare (the interactive app calls
    this in a thread while the user types): httpx2, httpcore2 (which imports h11 and anyio), and the anyio
    backend that httpcore2's pool and sockets run on. anyio loads its backend only when a loop first runs
    through it, so one empty ``anyio.run`` loads it by anyio's public API; not for a thread running a loop."""
    import anyio.lowlevel
    import httpcore2  # noqa: F401
    import httpx2  # noqa: F401

    anyio.run(anyio.lowlevel.checkpoint, backend="asyncio")


def _proxies() -> dict[str, str]:
    """The environment's proxy URLs by scheme (``all`` for ALL_PROXY), as httpx2 reads them."""
    from urllib.request import getproxies

    return {scheme: url if "://" in url else f"http://{url}" for scheme, url in getproxies().items()
            if scheme in ("http", "https", "all") and url}


def _proxy_for(url: str) -> str | None:
    """The proxy a request to ``url`` goes through (``None``: direct, NO_PROXY names its host)."""
    from urllib.parse import urlsplit
    from urllib.request import proxy_bypass

    proxies = _proxies()
    parts = urlsplit(url)
    proxy = proxies.get(parts.scheme) or proxies.get("all")
    if proxy is None or proxy_bypass(parts.hostname or ""):
        return None
    return proxy


def _without_credentials(url: str) -> str:
    scheme, separator, rest = url.partition("://")
    return f"{scheme}{separator}{rest.rsplit('@', 1)[-1]}"


def _environment_proxies() -> bool:
    """Whether httpx2 would route some URL through a proxy from the environment (it reads the same mapping)."""
    from urllib.request import getproxies

    return any(getproxies().get(scheme) for scheme in ("http", "https", "all"))


@functools.lru_cache(maxsize=8)
def _tls_context(environment: tuple[str | None, ...]) -> ssl.SSLContext:
    """One TLS context per process and CA environment, made at the first https request (never, against a
    local http:// server); its CA certificates load at its first handshake, once, whichever loop's client
    makes it."""
    from pi_core.llm.tls import provider_context

    return provider_context()


def connect_failure(err: Exception, request: WireRequest) -> WireError:
    import httpx2

    if isinstance(err, httpx2.TimeoutException):
        return WireError(f"Request timed out.{request.origin()}", retryable=True)
    refused = _refused(err)
    proxy = _proxy_for(request.url) if refused and _environment_proxies() else None
    if proxy is not None:
        return WireError(f"Connection error.: the proxy {_without_credentials(proxy)} refused the connection "
                         f"(is it running?){request.origin()}", retryable=True,
                         permanent=_is_loopback(proxy))
    if refused and _is_loopback(request.url):
        return WireError(f"Connection error.: connection refused (is the local server running?){request.origin()}",
                         permanent=True)
    detail = "connection refused" if refused else failure_detail(err)
    return WireError(f"Connection error.: {detail}{request.origin()}", retryable=True)


def _refused(err: BaseException) -> bool:
    seen: set[int] = set()
    current: BaseException | None = err
    while current is not None and id(current) not in seen:
        if isinstance(current, ConnectionRefusedError):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


def _is_loopback(url: str) -> bool:
    import ipaddress
    from urllib.parse import urlsplit

    try:
        host = urlsplit(url).hostname or ""
    except ValueError:
        return False
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
