"""TLS contexts whose trusted CA certificates are loaded on the first TLS connection, not when made.

Loading the CA bundle takes ~47 ms. Provider plugins build their SDK client (and so its TLS context)
before the first request; against a plain-http endpoint (a local model server) no TLS connection is
ever made and the load is wasted start-up time. ``DeferredTrustContext`` is an ``ssl.SSLContext``
whose trust store is filled, once, just before it wraps its first connection. Over https the cost is
the same, only paid at the first handshake instead of at client creation.
"""

from __future__ import annotations

import os
import platform
import ssl
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import socket

_LOCK = threading.Lock()


class DeferredTrustContext(ssl.SSLContext):
    """An ``ssl.SSLContext`` (``PROTOCOL_TLS_CLIENT``) that runs ``load(self)`` before wrapping its first
    connection. Build it with ``DeferredTrustContext.create(load)``."""

    _pi_load: Callable[[ssl.SSLContext], None] | None = None

    @classmethod
    def create(cls, load: Callable[[ssl.SSLContext], None]) -> DeferredTrustContext:
        context = cls(ssl.PROTOCOL_TLS_CLIENT)
        context._pi_load = load
        return context

    def _ensure_trust(self) -> None:
        if self._pi_load is None:
            return
        with _LOCK:  # a second connection must not wrap before the first has loaded the store
            load, self._pi_load = self._pi_load, None
            if load is not None:
                try:
                    load(self)
                except BaseException:
                    self._pi_load = load  # the next connection tries again and raises the same error
                    raise

    def wrap_bio(self, incoming: ssl.MemoryBIO, outgoing: ssl.MemoryBIO, server_side: bool = False,
                 server_hostname: str | bytes | None = None, session: ssl.SSLSession | None = None) -> ssl.SSLObject:
        self._ensure_trust()
        return super().wrap_bio(incoming, outgoing, server_side=server_side, server_hostname=server_hostname,
                                session=session)

    def wrap_socket(self, sock: socket.socket, server_side: bool = False, do_handshake_on_connect: bool = True,
                    suppress_ragged_eofs: bool = True, server_hostname: str | bytes | None = None,
                    session: ssl.SSLSession | None = None) -> ssl.SSLSocket:
        self._ensure_trust()
        return super().wrap_socket(sock, server_side=server_side, do_handshake_on_connect=do_handshake_on_connect,
                                   suppress_ragged_eofs=suppress_ragged_eofs, server_hostname=server_hostname,
                                   session=session)


def default_context() -> ssl.SSLContext:
    """``ssl.create_default_context()`` (server authentication, default CA paths) with the CA load deferred."""
    context = DeferredTrustContext.create(lambda ctx: ctx.load_default_certs(ssl.Purpose.SERVER_AUTH))
    _keylog(context)
    return context


def httpx_default_context() -> ssl.SSLContext:
    """What ``httpx2.create_ssl_context()`` builds (httpcore2's default: ``SSL_CERT_FILE``, else
    ``SSL_CERT_DIR``, else OpenSSL's compiled-in CA file and directory), with the CA load deferred.
    Where httpcore2 does something else (Windows/macOS trust stores, no CA file found) this returns
    httpx2's own context."""
    cafile: str | None = os.environ.get("SSL_CERT_FILE") or None
    capath: str | None = None if cafile else (os.environ.get("SSL_CERT_DIR") or None)
    if cafile is None and capath is None:
        if platform.system() in ("Windows", "Darwin"):
            return _httpx2_context()
        paths = ssl.get_default_verify_paths()
        cafile = paths.openssl_cafile if paths.openssl_cafile and os.path.isfile(paths.openssl_cafile) else None
        capath = paths.openssl_capath if paths.openssl_capath and os.path.isdir(paths.openssl_capath) else None
        if cafile is None:
            return _httpx2_context()
    context = DeferredTrustContext.create(lambda ctx: ctx.load_verify_locations(cafile, capath))
    if os.environ.get("SSL_CERT_FILE") or os.environ.get("SSL_CERT_DIR"):
        _keylog(context)  # httpcore2 uses ssl.create_default_context() for these, which honours SSLKEYLOGFILE
    return context


def _httpx2_context() -> ssl.SSLContext:
    import httpx2

    return httpx2.create_ssl_context()


def _keylog(context: ssl.SSLContext) -> None:
    keylog = os.environ.get("SSLKEYLOGFILE")
    if keylog and not sys.flags.ignore_environment:
        context.keylog_filename = keylog


def provider_context() -> ssl.SSLContext:
    """The trust store of provider requests, CA load deferred: ``SSL_CERT_FILE``/``SSL_CERT_DIR`` (as
    httpx2), else ``REQUESTS_CA_BUNDLE`` (file or directory, as ``requests`` users set it), else the
    system store; ``NODE_EXTRA_CA_CERTS`` (what a Pi user has for a corporate proxy) adds to any of them."""
    extra = os.environ.get("NODE_EXTRA_CA_CERTS") or None
    bundle = os.environ.get("REQUESTS_CA_BUNDLE") or None
    if os.environ.get("SSL_CERT_FILE") or os.environ.get("SSL_CERT_DIR") or bundle is None:
        context = httpx_default_context()
    elif os.path.isdir(bundle):
        context = DeferredTrustContext.create(lambda ctx: ctx.load_verify_locations(capath=bundle))
        _keylog(context)
    else:
        context = DeferredTrustContext.create(lambda ctx: ctx.load_verify_locations(cafile=bundle))
        _keylog(context)
    if extra is None:
        return context
    if isinstance(context, DeferredTrustContext) and context._pi_load is not None:
        base = context._pi_load

        def load(ctx: ssl.SSLContext) -> None:
            base(ctx)
            ctx.load_verify_locations(cafile=extra)

        context._pi_load = load
    else:
        context.load_verify_locations(cafile=extra)
    return context
