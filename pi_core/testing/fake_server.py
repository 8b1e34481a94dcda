"""A scripted model server on 127.0.0.1 that speaks the real streaming wire of every supported API.

Tests queue wire-neutral ``Reply`` objects; each incoming request takes the next one and gets it rendered
for the API its path names:

- ``POST /v1/messages``                                    Anthropic Messages (SSE)
- ``POST /v1/chat/completions``                            OpenAI Chat Completions (SSE chunks)
- ``POST /mistral/v1/chat/completions``                    Mistral's chat stream (thinking chunks)
- ``POST /v1/responses``                                   OpenAI Responses (SSE)
- ``POST .../messages`` with a ``context`` object          Pi's own protocol (``pi-messages``, Radius)
- ``POST /model/{model}/converse-stream``                  Amazon Bedrock ConverseStream (AWS event-stream); a
  request whose ``Authorization`` is neither a well-formed SigV4 signature nor a Bearer token gets AWS's 403
- ``POST /codex/responses``                                ChatGPT Codex (Responses SSE ending in ``response.done``)
- ``GET /codex/responses`` upgraded to a WebSocket          ChatGPT Codex over its WebSocket (``fake_websocket``)
- ``POST /v1beta/models/{model}:streamGenerateContent``    Google Generative AI (``?alt=sse``; Vertex's paths too)
- ``POST .../publishers/anthropic/models/{model}:streamRawPredict``   Claude on Vertex AI (Anthropic's SSE)

Usage::

    with FakeModelServer() as server:
        server.add(Reply(thinking="hmm", text="hi"), Reply(tool_calls=[("read", {"path": "a"})]))
        model = Model(id="m", api="anthropic-messages", provider="anthropic", base_url=server.url)
        ...
        assert server.requests[0].body["model"] == "m"

Base URLs: Anthropic takes ``server.url``; OpenAI ``server.url + "/v1"``; Google ``server.url + "/v1beta"``
(``server.base_url_for(api)`` knows which). Faults are fields of ``Reply`` (``Reply.http_error(429,
headers={"retry-after": "1"})``, ``disconnect_after``, ``stall_after``/``stall_s``, ``malformed_sse_after``,
``stream_error``, ``empty``, ``chunk_delay``, ``invalid_utf8`` (each U+FFFD of the reply is sent as the
byte 0xFF), ``trickle_after``/``trickle_s`` (a stream that sends a byte at a time and never completes
an event), malformed tool arguments via ``ToolUse(raw_arguments=...)``).
Frame positions count SSE frames of the chosen wire; the string ``"content"`` means "right after the last
content frame, before the stop reason/usage frames", which is the same logical spot on every wire.

``FakeModelServer(keep_alive=True)`` keeps connections open between requests, as the real APIs do: streamed
replies are sent chunked instead of ending with the connection (the bench uses it, so the harnesses' per-turn
times hold no TCP connection set-up and no server thread start). Default: one connection per request.
``server.hang_up_on_reuse()`` closes a kept-alive connection unanswered when its next request arrives (a
server's idle timeout crossing that request), ``drop_idle_connections()`` closes the idle ones at once.

``FakeModelServer(tls=context)`` serves https (``pi_core.testing.fake_proxy.make_certificates`` makes a
CA and a certificate for 127.0.0.1). In pytest, the ``pi_fake_server`` fixture (from the ``pi`` pytest plugin) gives a started server per test;
``pi_core.testing.streams`` has helpers to run a provider against it and check the event protocol.

An empty queue answers HTTP 500 with a text naming the problem and ``x-should-retry: false``, unless a
``responder`` is set: then it answers every request the queue does not. A ``Reply`` (and the responder)
may also be a callable ``(RecordedRequest) -> Reply`` to answer based on the request; that is how many
concurrent sessions share one server (a scripted queue would hand their turns out in arrival order).

Standalone (for CLI subprocess tests)::

    python -m pi_core.testing.fake_server --script replies.json [--port N] [--record requests.jsonl]

prints ``http://127.0.0.1:PORT`` on its first line and serves until terminated. While running it also
accepts ``POST /_fake/replies`` (a JSON list of replies to append) and ``GET /_fake/requests``.
"""

from __future__ import annotations

import argparse
import json
import socket
import ssl
import struct
import sys
import threading
import time
from collections.abc import Callable, Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Self
from urllib.parse import parse_qs, urlsplit

from pi_core.testing import fake_websocket
from pi_core.testing.fake_faults import with_faults
from pi_core.testing.fake_routes import (
    RecordedRequest,
    aws_authorized,
    model_from_path,
    wire_for_path,
)
from pi_core.testing.fake_script import (  # noqa: F401 - re-exported: the server's script API
    Block,
    FramePos,
    RedactedThinking,
    Reply,
    Text,
    Thinking,
    ToolUse,
    load_script,
    write_script,
)
from pi_core.testing.fake_wires import (
    DEFAULT_ERROR_MESSAGES,
    RENDERERS,
    error_body,
)

# --- the server -----------------------------------------------------------------------------------


ReplySource = Reply | Callable[[RecordedRequest], Reply]


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    owner: FakeModelServer

    tls: ssl.SSLContext | None = None
    keep_alive = False

    def server_bind(self) -> None:
        super().server_bind()
        self.open_connections: set[socket.socket] = set()
        self.accepted = 0

    def get_request(self) -> tuple[socket.socket, Any]:
        conn, addr = super().get_request()
        # Small SSE frames must leave immediately, not wait on Nagle's algorithm.
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if self.tls is not None:
            conn = self.tls.wrap_socket(conn, server_side=True, do_handshake_on_connect=False)
        self.open_connections.add(conn)
        self.accepted += 1
        return conn, addr

    def shutdown_request(self, request: Any) -> None:
        self.open_connections.discard(request)
        super().shutdown_request(request)

    def close_idle_connections(self) -> None:
        """End kept-alive connections, so their handler threads return (``server_close`` joins them)."""
        for conn in list(self.open_connections):
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError)):
            return  # a client that exits with a kept-alive connection open (Pi 1.6.0 does) is not a server bug
        if self.tls is not None and isinstance(sys.exc_info()[1], (ssl.SSLError, OSError)):
            return  # a client that refused our certificate (what the CA tests check) is not a server bug
        super().handle_error(request, client_address)


class FakeModelServer:
    """Threaded HTTP server on 127.0.0.1 (random port by default). Use as a context manager."""

    def __init__(self, replies: Iterable[ReplySource] = (), *, port: int = 0, host: str = "127.0.0.1",
                 record_path: str | Path | None = None, tls: ssl.SSLContext | None = None,
                 responder: ReplySource | None = None, keep_alive: bool = False) -> None:
        self._lock = threading.Lock()
        self._queue: list[ReplySource] = list(replies)
        self.responder = responder
        self.requests: list[RecordedRequest] = []
        # Model ids to answer GET /v1/models and /api/tags with, like a local server (model discovery).
        self.model_list: list[str] | None = None
        self._record_path = Path(record_path) if record_path else None
        self._stop = threading.Event()
        self._httpd = _HTTPServer((host, port), _Handler)
        self._httpd.owner = self
        self._httpd.tls = tls
        self._httpd.keep_alive = keep_alive
        self._thread: threading.Thread | None = None
        self._hang_ups = 0
        self._hang_up_reset = False
        self.hung_up = 0  # requests closed unanswered by ``hang_up_on_reuse``
        # The Codex WebSocket endpoint (pi_core.testing.fake_websocket): "accept", "refuse" or "hang".
        self.websocket_mode = "accept"
        self.websocket_refuse_status = 426
        self.websockets = 0  # sockets accepted so far
        self.websocket_upgrades = 0  # upgrade requests, accepted or not
        self.websocket_closes: list[int | None] = []  # each ended socket's close code (None: no close frame)
        self.websocket_abandoned: list[float] = []  # "hang": seconds each client waited for the upgrade
        self.forget_responses = 0  # the next N continuations are answered ``previous_response_not_found``

    # -- lifecycle --

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        scheme = "https" if self._httpd.tls is not None else "http"
        return f"{scheme}://127.0.0.1:{self.port}"

    @property
    def connections(self) -> int:
        """How many TCP connections the server has accepted so far."""
        return self._httpd.accepted

    def base_url_for(self, api: str) -> str:
        if api.startswith("openai") or api.endswith("openai-responses"):
            return self.url + "/v1"
        if api.startswith("google"):
            return self.url + "/v1beta"
        if api == "mistral-conversations":
            return self.url + "/mistral"
        return self.url

    def start(self) -> Self:
        if self._thread is None:
            self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.01},
                                            name="fake-model-server", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()  # wakes stalled replies
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join(5)
            self._thread = None
        self._httpd.close_idle_connections()
        self._httpd.server_close()

    def drop_idle_connections(self) -> None:
        """Close every kept-alive connection now (a server ending idle connections between requests)."""
        self._httpd.close_idle_connections()

    def hang_up_on_reuse(self, count: int = 1, *, reset: bool = False) -> None:
        """The next ``count`` requests that arrive on a kept-alive connection which already carried one are
        read, then the connection is closed unanswered (with RST when ``reset``): a server's idle timeout
        crossing the client's next request. They are counted in ``hung_up``, not recorded as requests."""
        with self._lock:
            self._hang_ups = count
            self._hang_up_reset = reset

    def _take_hang_up(self) -> bool | None:
        """Whether to hang up on a request on a reused connection: ``None`` no, else whether to reset."""
        with self._lock:
            if not self._hang_ups:
                return None
            self._hang_ups -= 1
            self.hung_up += 1
            return self._hang_up_reset

    def _open_socket(self) -> int:
        with self._lock:
            self.websockets += 1
            return self.websockets

    def _forgets(self) -> bool:
        with self._lock:
            if not self.forget_responses:
                return False
            self.forget_responses -= 1
            return True

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- script --

    def add(self, *replies: ReplySource) -> FakeModelServer:
        with self._lock:
            self._queue.extend(replies)
        return self

    @property
    def pending(self) -> int:
        """Replies not yet served."""
        with self._lock:
            return len(self._queue)

    def _record(self, request: RecordedRequest) -> ReplySource | None:
        with self._lock:
            self.requests.append(request)
            if self._record_path is not None:
                with self._record_path.open("a") as fh:
                    fh.write(json.dumps(request.to_json()) + "\n")
            return self._queue.pop(0) if self._queue else self.responder


class _Handler(BaseHTTPRequestHandler):
    server: _HTTPServer
    protocol_version = "HTTP/1.1"
    served = 0  # requests this connection carried

    def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
        return

    @property
    def owner(self) -> FakeModelServer:
        return self.server.owner

    def do_GET(self) -> None:
        path = urlsplit(self.path).path
        listed = self.owner.model_list
        if fake_websocket.is_upgrade(self.headers) and wire_for_path(path) == fake_websocket.WIRE:
            fake_websocket.serve(self)
        elif path == "/_fake/requests":
            with self.owner._lock:
                data = [r.to_json() for r in self.owner.requests]
            self._send_json(200, data)
        elif listed is not None and path == "/v1/models":  # a local server's model list (vLLM, llama.cpp)
            self._send_json(200, {"object": "list", "data": [{"id": m, "object": "model"} for m in listed]})
        elif listed is not None and path == "/api/tags":  # Ollama's own list
            self._send_json(200, {"models": [{"name": m, "model": m} for m in listed]})
        else:
            self._send_json(404, {"error": {"message": f"fake model server: no GET route {self.path}"}})

    def do_POST(self) -> None:
        split = urlsplit(self.path)
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        arrived = time.perf_counter()
        if self.served:
            reset = self.owner._take_hang_up()
            if reset is not None:
                self.close_connection = True
                if reset:
                    self._reset()
                return
        self.served += 1
        try:
            body = json.loads(raw) if raw else None
        except json.JSONDecodeError:
            body = None
        if split.path == "/_fake/replies":
            try:
                self.owner.add(*(Reply.from_json(item) for item in (body or [])))
            except (TypeError, ValueError) as err:
                self._send_json(400, {"error": {"message": f"bad reply script: {err}"}})
                return
            self._send_json(200, {"pending": self.owner.pending})
            return
        wire = wire_for_path(split.path)
        if wire == "anthropic-messages" and isinstance(body, dict) and "context" in body and "messages" not in body:
            wire = "pi-messages"  # same path, Pi's own protocol: the whole context in one object
        request = RecordedRequest("POST", split.path, {k: v[-1] for k, v in parse_qs(split.query).items()},
                                  {k.lower(): v for k, v in self.headers.items()}, body, raw, wire, arrived)
        source = self.owner._record(request)
        if wire is None:
            self._send_json(404, {"error": {"message": f"fake model server: unknown API path {split.path}"}})
            return
        if wire == "bedrock-converse-stream" and not aws_authorized(request.headers):
            self._send_json(403, {"message": "Authorization header requires 'Credential', 'SignedHeaders' and "
                                             "'Signature' parameters (fake model server)"},
                            {"x-amzn-errortype": "IncompleteSignatureException"})
            return
        if source is None:
            message = (f"fake model server: no reply scripted for request #{len(self.owner.requests)} "
                       f"(POST {split.path}); the reply queue is empty")
            self._send_json(500, error_body(wire, 500, message, None), {"x-should-retry": "false"})
            return
        if callable(source):
            try:
                source = source(request)
            except Exception as err:  # noqa: BLE001 - a broken test callback must show up as a clear reply
                message = f"fake model server: the scripted reply callback raised {type(err).__name__}: {err}"
                self._send_json(500, error_body(wire, 500, message, None), {"x-should-retry": "false"})
                return
        try:
            self._serve(source, wire, request)
        finally:
            request.finished = time.perf_counter()

    # -- responses --

    def _send_json(self, status: int, data: Any, headers: dict[str, str] | None = None) -> None:
        payload = data.encode() if isinstance(data, str) else json.dumps(data).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(payload)))
        if not self.server.keep_alive:
            self.send_header("connection", "close")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(payload)
        self.close_connection = not self.server.keep_alive

    def _serve(self, reply: Reply, wire: str, request: RecordedRequest) -> None:
        if reply.status != 200:
            message = reply.error_message or DEFAULT_ERROR_MESSAGES.get(reply.status, f"HTTP {reply.status}")
            body = reply.body if reply.body is not None else error_body(wire, reply.status, message, reply.error_type)
            self._send_json(reply.status, body, reply.headers)
            return
        model = (request.body or {}).get("model") or model_from_path(request.path)
        rendering = RENDERERS[wire](reply, len(self.owner.requests), model, request.body or {})
        faulted = with_faults(reply, rendering, wire)
        frames, disconnect_at, stall_at = faulted.frames, faulted.disconnect_at, faulted.stall_at
        trickle_at = faulted.trickle_at

        self.send_response(200)
        self.send_header("content-type", "application/vnd.amazon.eventstream" if wire == "bedrock-converse-stream"
                         else "text/event-stream")
        self.send_header("cache-control", "no-cache")
        chunked = self.server.keep_alive
        self.send_header("transfer-encoding" if chunked else "connection", "chunked" if chunked else "close")
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.close_connection = True  # until the whole body went out (a fault ends the connection)
        try:
            self.wfile.flush()
            for index, frame in enumerate(frames + [b""]):
                if index == stall_at and self.owner._stop.wait(reply.stall_s):
                    return
                if index == disconnect_at:
                    self._reset()
                    return
                if index == trickle_at:
                    self._trickle(frame or b"data: ", reply.trickle_s, chunked)
                    return
                if not frame:
                    break
                if index and reply.chunk_delay and self.owner._stop.wait(reply.chunk_delay):
                    return
                self.wfile.write(b"%x\r\n%s\r\n" % (len(frame), frame) if chunked else frame)
                self.wfile.flush()
            if chunked:
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()
                self.close_connection = False
        except (BrokenPipeError, ConnectionResetError):
            return  # the client went away (e.g. it aborted): nothing left to do

    def _trickle(self, frame: bytes, interval: float, chunked: bool = False) -> None:
        """Send ``frame`` without its end one byte per ``interval``, then keep sending spaces: bytes keep
        coming, an event never completes (until the server stops or the client hangs up)."""
        body = frame.rstrip(b"\r\n")
        index = 0
        while not self.owner._stop.wait(interval):
            byte = body[index:index + 1] if index < len(body) else b" "
            self.wfile.write(b"1\r\n%s\r\n" % byte if chunked else byte)
            self.wfile.flush()
            index += 1

    def _reset(self) -> None:
        """Close with RST instead of FIN, the way a dropped connection looks to the client."""
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.connection.close()


# --- standalone process ---------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pi_core.testing.fake_server",
                                     description="Serve scripted model replies on 127.0.0.1.")
    parser.add_argument("--script", help="JSON file with the replies to serve, in order")
    parser.add_argument("--port", type=int, default=0, help="port to listen on (default: a free one)")
    parser.add_argument("--record", help="append each request as one JSON line to this file")
    parser.add_argument("--keep-alive", action="store_true",
                        help="keep connections open between requests (streamed replies sent chunked)")
    args = parser.parse_args(argv)
    replies = load_script(args.script) if args.script else []
    server = FakeModelServer(replies, port=args.port, record_path=args.record, keep_alive=args.keep_alive)
    print(server.url, flush=True)
    try:
        server._httpd.serve_forever(poll_interval=0.05)
    except KeyboardInterrupt:
        pass
    finally:
        server._stop.set()
        server._httpd.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
