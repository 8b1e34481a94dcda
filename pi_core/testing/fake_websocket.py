"""The fake model server's WebSocket endpoint: the ChatGPT Codex Responses wire over a socket.

``GET /codex/responses`` with ``Upgrade: websocket`` is answered by websockets' sans-I/O ``ServerProtocol``
(the handshake and the framing; this module only moves bytes). Each ``{"type": "response.create", …}`` text
message is one request: it is recorded (``method="WS"``, the upgrade's headers, the message as ``body``,
``socket`` numbering the socket it came over) and takes the next scripted ``Reply``, sent back as one text
message per event of the Codex stream (the JSON of the SSE wire's ``data:`` lines). As the real backend, a
``previous_response_id`` must name a response given earlier *on the same socket*, else the answer is an
``error`` event with code ``previous_response_not_found`` (``server.forget_responses = N``: the next N
continuations are refused so, as after a backend restart). The server counts ``websocket_upgrades``,
``websockets`` (accepted) and each ended socket's close code in ``websocket_closes``.

Faults: a ``Reply`` with an HTTP status is an ``error`` event carrying it; ``stream_error``,
``disconnect_after`` (the TCP connection reset), ``stall_after``/``stall_s``, ``malformed_sse_after``
(a message that is not JSON) and ``invalid_utf8`` as on the SSE wires (``pi_core.testing.fake_faults``).
The server's ``websocket_mode`` is ``"accept"`` (default), ``"refuse"`` (the upgrade answered with HTTP
``websocket_refuse_status``, 426 by default: a client falls back to SSE) or ``"hang"`` (the upgrade never answered: a client's connect timeout; how long
each client waited before it hung up is in ``websocket_abandoned``).
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import parse_qs, urlsplit

from pi_core.testing.fake_faults import with_faults
from pi_core.testing.fake_routes import RecordedRequest
from pi_core.testing.fake_wires import (
    DEFAULT_ERROR_MESSAGES,
    RENDERERS,
    error_body,
)

if TYPE_CHECKING:
    import threading
    from email.message import Message
    from io import BufferedIOBase
    from socket import socket

    from websockets.server import ServerProtocol

    from pi_core.testing.fake_script import Reply


class Server(Protocol):
    """What of ``FakeModelServer`` the endpoint uses (a Protocol: fake_server imports this module)."""

    websocket_mode: str
    websocket_refuse_status: int
    websocket_upgrades: int
    websocket_closes: list[int | None]
    websocket_abandoned: list[float]
    requests: list[RecordedRequest]
    _lock: threading.Lock
    _stop: threading.Event

    def _record(self, request: RecordedRequest) -> Any: ...
    def _open_socket(self) -> int: ...
    def _forgets(self) -> bool: ...


class Handler(Protocol):
    """The fake server's request handler, as far as a socket needs it."""

    close_connection: bool
    headers: Message
    path: str
    requestline: str
    rfile: BufferedIOBase
    connection: socket

    @property
    def owner(self) -> Server: ...
    def _reset(self) -> None: ...


WIRE = "openai-codex-responses"


def is_upgrade(headers: Message) -> bool:
    return str(headers.get("upgrade", "")).lower() == "websocket"


def serve(handler: Handler) -> None:
    """Answer one upgrade request, then serve its socket until the client or the server closes it."""
    from websockets.http11 import Request
    from websockets.server import ServerProtocol

    owner = handler.owner
    handler.close_connection = True
    with owner._lock:
        owner.websocket_upgrades += 1
    if owner.websocket_mode == "hang":  # until the client gives up: how long it waited is recorded
        arrived = time.monotonic()
        try:
            while handler.rfile.read1(65536):
                pass
        except OSError:
            pass
        with owner._lock:
            owner.websocket_abandoned.append(time.monotonic() - arrived)
        return
    protocol = ServerProtocol(max_size=None)
    # http.server read the upgrade request already: the protocol parses it again from its bytes
    head = "".join(f"{name}: {value}\r\n" for name, value in handler.headers.items())
    protocol.receive_data(f"{handler.requestline}\r\n{head}\r\n".encode("latin-1"))
    request = next(event for event in protocol.events_received() if isinstance(event, Request))
    if owner.websocket_mode == "refuse":
        status = owner.websocket_refuse_status
        protocol.send_response(protocol.reject(status, f"fake model server: WebSocket upgrade refused ({status})"))
        _flush(handler, protocol)
        return
    protocol.send_response(protocol.accept(request))
    _flush(handler, protocol)
    socket_number = owner._open_socket()
    try:
        _Socket(handler, protocol, socket_number).run()
    finally:
        with owner._lock:
            owner.websocket_closes.append(protocol.close_rcvd.code if protocol.close_rcvd is not None else None)


def _flush(handler: Handler, protocol: ServerProtocol) -> None:
    for data in protocol.data_to_send():
        if data:
            handler.connection.sendall(data)


class _Socket:
    def __init__(self, handler: Handler, protocol: ServerProtocol, number: int) -> None:
        self.handler, self.protocol, self.number = handler, protocol, number
        self.owner: Server = handler.owner
        self.given: set[str] = set()  # response ids answered on this socket (what a continuation may name)
        self.parts: list[bytes] = []

    def run(self) -> None:
        from websockets.frames import Frame, Opcode

        while True:
            try:
                data = self.handler.rfile.read1(65536)
            except OSError:
                return
            if not data:
                self.protocol.receive_eof()
                return
            self.protocol.receive_data(data)
            for frame in self.protocol.events_received():
                if isinstance(frame, Frame) and frame.opcode in (Opcode.TEXT, Opcode.BINARY, Opcode.CONT):
                    self.parts.append(bytes(frame.data))
                    if frame.fin:
                        message, self.parts = b"".join(self.parts), []
                        if not self._answer(message):
                            return
            try:
                _flush(self.handler, self.protocol)  # pongs, the close handshake
            except OSError:
                return
            if self.protocol.close_code is not None:
                return

    def _send(self, event: Any) -> None:
        self.protocol.send_text(json.dumps(event).encode() if not isinstance(event, bytes) else event)
        _flush(self.handler, self.protocol)

    def _answer(self, message: bytes) -> bool:
        """Record and answer one message; False when the socket is gone."""
        split = urlsplit(self.handler.path)
        try:
            body = json.loads(message)
        except ValueError:
            body = None
        request = RecordedRequest("WS", split.path, {k: v[-1] for k, v in parse_qs(split.query).items()},
                                  {k.lower(): v for k, v in self.handler.headers.items()}, body, message, WIRE,
                                  time.perf_counter(), socket=self.number)
        previous = body.get("previous_response_id") if isinstance(body, dict) else None
        if previous is not None and (previous not in self.given or self.owner._forgets()):
            with self.owner._lock:
                self.owner.requests.append(request)  # recorded, but the backend answers it itself
            self._send({"type": "error", "code": "previous_response_not_found",
                        "message": f"Previous response with id '{previous}' not found."})
            return True
        source = self.owner._record(request)
        try:
            if callable(source):
                source = source(request)
            if source is None:
                message_text = (f"fake model server: no reply scripted for request #{len(self.owner.requests)} "
                                f"(WebSocket {split.path}); the reply queue is empty")
                self._send({"type": "error", "code": "server_error", "message": message_text})
                return True
            return self._stream(source, request)
        except OSError:
            return False
        finally:
            request.finished = time.perf_counter()

    def _stream(self, reply: Reply, request: RecordedRequest) -> bool:
        if reply.status != 200:
            text = reply.error_message or DEFAULT_ERROR_MESSAGES.get(reply.status, f"HTTP {reply.status}")
            body = reply.body if reply.body is not None else error_body(WIRE, reply.status, text, reply.error_type)
            error = body.get("error") if isinstance(body, dict) else None
            self._send({"type": "error", "status": reply.status, "error": error if error is not None else body})
            return True
        body = request.body if isinstance(request.body, dict) else {}
        rendering = RENDERERS[WIRE](reply, len(self.owner.requests), str(body.get("model") or ""), body)
        faulted = with_faults(reply, rendering, WIRE)
        events = [_data(frame) for frame in faulted.frames]
        disconnect_at, stall_at = faulted.disconnect_at, faulted.stall_at
        for index, event in enumerate([*events, None]):
            if index == stall_at and self.owner._stop.wait(reply.stall_s):
                return False
            if index == disconnect_at:
                self.handler._reset()
                return False
            if event is None:
                break
            if index and reply.chunk_delay and self.owner._stop.wait(reply.chunk_delay):
                return False
            self._send(event)
            response_id = _response_id(event)
            if response_id:
                self.given.add(response_id)
        return True


def _data(frame: bytes) -> bytes:
    """The JSON of an SSE frame's ``data:`` lines."""
    text = frame.decode("latin-1")  # bytes through as they are (``invalid_utf8`` sends 0xFF)
    return "\n".join(line[5:].strip() for line in text.splitlines() if line.startswith("data:")).encode("latin-1")


def _response_id(event: bytes) -> str | None:
    if not event.startswith(b'{"type":"response.created"') and b'"response.created"' not in event[:40]:
        return None
    try:
        return str(json.loads(event)["response"]["id"])
    except (ValueError, KeyError, TypeError):
        return None
