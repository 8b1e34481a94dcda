"""A small web server on 127.0.0.1 for web_fetch tests (never the internet)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

PAGES: dict[str, tuple[int, str, bytes]] = {
    "/page.html": (200, "text/html; charset=utf-8",
                   (b"<html><head><title>T</title><script>var secret = 1;</script></head>"
                   b"<body><h1>Release notes</h1><p>Version 2 &amp; more</p><style>p{}</style></body></html>")),
    "/notes.txt": (200, "text/plain", b"line one\nline two\n"),
    "/big.txt": (200, "text/plain", "".join(f"row {i}\n" for i in range(5000)).encode()),
    "/image.png": (200, "image/png", b"\x89PNG\r\n\x1a\n0000"),
    "/latin1.txt": (200, "text/plain; charset=latin-1", "café".encode("latin-1")),
}


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # keep test output quiet
        pass

    def do_GET(self) -> None:
        if self.path == "/slow":
            time.sleep(1)
        if self.path == "/moved":
            self.send_response(302)
            self.send_header("location", "/notes.txt")
            self.end_headers()
            return
        status, kind, body = PAGES.get(self.path, (404, "text/plain", b"nothing here"))
        self.send_response(status)
        self.send_header("content-type", kind)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        try:
            self.wfile.write(body)
        except BrokenPipeError:
            pass  # the client gave up (the timeout test): nothing to answer


@pytest.fixture(scope="module")
def web() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()
