"""A forward HTTP proxy on 127.0.0.1 for tests of ``HTTPS_PROXY``/``HTTP_PROXY``/``NO_PROXY``.

``CONNECT host:port`` opens a tunnel (what a client does for an https URL); an absolute-form request
(``POST http://host:port/path``, a plain-http URL) is relayed to its origin. ``proxy.targets`` records
each ``host:port`` asked for, in order. Also: ``make_certificates(dir)`` makes a throw-away CA and a
server certificate for 127.0.0.1 with the ``openssl`` command, for a TLS ``FakeModelServer``.
"""

from __future__ import annotations

import select
import socket
import socketserver
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Self
from urllib.parse import urlsplit

if TYPE_CHECKING:
    import ssl


class _Handler(socketserver.StreamRequestHandler):
    server: _Server

    def handle(self) -> None:
        line = self.rfile.readline(65536).decode("latin-1")
        method, _, rest = line.partition(" ")
        target = rest.rsplit(" ", 1)[0]
        head = [line.encode("latin-1")]
        while True:
            header = self.rfile.readline(65536)
            if header in (b"\r\n", b"\n", b""):
                break
            head.append(header)
        if method == "CONNECT":
            host, _, port = target.rpartition(":")
            self.server.owner.targets.append(target)
            upstream = socket.create_connection((host, int(port)))
            self.wfile.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
            self.wfile.flush()
        else:
            parts = urlsplit(target)
            self.server.owner.targets.append(f"{parts.hostname}:{parts.port or 80}")
            upstream = socket.create_connection((parts.hostname or "", parts.port or 80))
            path = parts.path + (f"?{parts.query}" if parts.query else "")
            head[0] = f"{method} {path} {line.rsplit(' ', 1)[1]}".encode("latin-1")
            length = next((int(h.split(b":", 1)[1]) for h in head[1:] if h.lower().startswith(b"content-length:")), 0)
            upstream.sendall(b"".join(head) + b"\r\n" + (self.rfile.read(length) if length else b""))
        self._pipe(self.connection, upstream)

    @staticmethod
    def _pipe(client: socket.socket, upstream: socket.socket) -> None:
        sockets = [client, upstream]
        try:
            while True:
                readable, _, _ = select.select(sockets, [], [], 30)
                if not readable:
                    return
                for sock in readable:
                    data = sock.recv(65536)
                    if not data:
                        return
                    (upstream if sock is client else client).sendall(data)
        except OSError:
            return
        finally:
            upstream.close()


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True
    owner: FakeProxy


class FakeProxy:
    """Use as a context manager; ``url`` is ``http://127.0.0.1:PORT``."""

    def __init__(self) -> None:
        self.targets: list[str] = []
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.owner = self
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> Self:
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="fake-proxy", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(5)


@dataclass(frozen=True)
class Certificates:
    ca: Path  # the CA certificate a client must trust
    cert: Path  # the server's certificate (for 127.0.0.1 and localhost), signed by the CA
    key: Path

    def server_context(self) -> ssl.SSLContext:
        import ssl

        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.cert, self.key)
        return context


def make_certificates(directory: Path) -> Certificates:
    """A fresh CA and a server certificate under ``directory`` (needs the ``openssl`` command)."""
    directory.mkdir(parents=True, exist_ok=True)
    ca_key, ca, key, csr, cert = (directory / name for name in ("ca.key", "ca.pem", "server.key", "server.csr",
                                                                 "server.pem"))
    ext = directory / "server.ext"
    ext.write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\n"
                   "keyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n")

    def openssl(*args: str) -> None:
        subprocess.run(["openssl", *args], check=True, capture_output=True)

    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(ca_key), "-out", str(ca), "-days", "2",
            "-subj", "/CN=pi test CA", "-addext", "basicConstraints=critical,CA:TRUE",
            "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(csr), "-subj", "/CN=127.0.0.1")
    openssl("x509", "-req", "-in", str(csr), "-CA", str(ca), "-CAkey", str(ca_key), "-CAcreateserial",
            "-out", str(cert), "-days", "2", "-extfile", str(ext))
    return Certificates(ca, cert, key)
