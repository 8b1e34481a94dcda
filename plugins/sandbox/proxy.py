"""The host allow-list: an HTTP proxy pi runs on a Unix socket, reachable from the sandbox's own network
namespace (through ``bridge.py``), that connects only to the hosts ``sandbox.network`` lists.

It speaks what ``HTTP_PROXY`` / ``HTTPS_PROXY`` clients send: ``CONNECT host:port`` (TLS goes through
untouched) and plain-HTTP requests in absolute form. Anything else, or a host not on the list, gets a 403
whose body says why; the command sees it as its request's answer.
"""

from __future__ import annotations

import contextlib
import os
import socket
import socketserver
import threading
from urllib.parse import urlsplit

from pi_core.toolkit.sandbox import host_allowed

_HEAD_LIMIT = 64 * 1024
CONNECT_TIMEOUT_S = 15.0


def _relay(one: socket.socket, other: socket.socket) -> None:
    """Copy bytes both ways until either side is done."""

    def pump(source: socket.socket, sink: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while chunk := source.recv(65536):
                sink.sendall(chunk)
        with contextlib.suppress(OSError):
            sink.shutdown(socket.SHUT_WR)

    back = threading.Thread(target=pump, args=(other, one), daemon=True)
    back.start()
    pump(one, other)
    back.join()


class _Handler(socketserver.BaseRequestHandler):
    server: _Server

    def handle(self) -> None:
        client: socket.socket = self.request
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = client.recv(65536)
            if not chunk or len(head) > _HEAD_LIMIT:
                return
            head += chunk
        line, _, rest = head.partition(b"\r\n")
        parts = line.decode("latin-1").split()
        if len(parts) != 3:
            self._refuse(client, "the request is not HTTP")
            return
        method, target, _version = parts
        if method == "CONNECT":
            host, _, port = target.rpartition(":")
            forward = None
        else:
            url = urlsplit(target)
            if url.scheme != "http" or not url.hostname:
                self._refuse(client, f"{target} is not an absolute http:// URL")
                return
            host, port = url.hostname, str(url.port or 80)
            path = (url.path or "/") + (f"?{url.query}" if url.query else "")
            forward = f"{method} {path} {_version}\r\n".encode("latin-1") + rest
        host = host.strip("[]")
        if not host or not port.isdigit():
            self._refuse(client, f"{target} names no host and port")
            return
        if not host_allowed(host, self.server.hosts):
            self._refuse(client, f"host {host} is not in sandbox.network (allowed: {', '.join(self.server.hosts)})")
            return
        try:
            upstream = socket.create_connection((host, int(port)), timeout=CONNECT_TIMEOUT_S)
        except OSError as err:
            self._refuse(client, f"{host}:{port} could not be reached: {err.strerror or err}", status="502 Bad Gateway")
            return
        with upstream:
            upstream.settimeout(None)
            if forward is None:
                client.sendall(b"HTTP/1.1 200 Connection Established\r\n\r\n")
            else:
                upstream.sendall(forward)
            _relay(client, upstream)

    @staticmethod
    def _refuse(client: socket.socket, why: str, status: str = "403 Forbidden") -> None:
        body = f"blocked by the sandbox: {why}\n".encode()
        with contextlib.suppress(OSError):
            client.sendall(f"HTTP/1.1 {status}\r\nContent-Type: text/plain\r\nContent-Length: {len(body)}\r\n"
                           "Connection: close\r\n\r\n".encode() + body)


class _Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True
    hosts: tuple[str, ...] = ()


class HostProxy:
    """The proxy on ``path``, serving in a daemon thread until ``stop``."""

    def __init__(self, path: str, hosts: tuple[str, ...]) -> None:
        self.path, self.hosts = path, hosts
        self._server: _Server | None = None

    def start(self) -> None:
        server = _Server(self.path, _Handler)
        server.hosts = self.hosts
        os.chmod(self.path, 0o600)  # the user's processes only (the sandboxed ones run as the user)
        self._server = server
        threading.Thread(target=server.serve_forever, name="pi-sandbox-proxy", daemon=True).start()

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()
