"""A scripted reply's frames with its faults in place (shared by the fake server's SSE and WebSocket paths)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from pi_core.testing.fake_wires import (
    DEFAULT_ERROR_MESSAGES,
    malformed_frame,
    stream_error_frame,
)

if TYPE_CHECKING:
    from pi_core.testing.fake_script import FramePos, Reply
    from pi_core.testing.fake_wires import Rendering


@dataclass
class Faulted:
    """The frames to send and where the connection faults (frame positions; None: nowhere)."""

    frames: list[bytes]
    disconnect_at: int | None
    stall_at: int | None
    trickle_at: int | None


def with_faults(reply: Reply, rendering: Rendering, wire: str) -> Faulted:
    """``rendering``'s frames with the reply's in-band error, malformed frame and invalid UTF-8 applied; the
    string ``"content"`` places a fault right after the last content frame."""
    frames = [] if reply.empty else list(rendering.frames)
    content_end = len(frames) - rendering.tail

    def position(value: FramePos) -> int | None:
        if value is None or reply.empty:
            return None
        if value == "content":
            return content_end
        assert isinstance(value, int)
        return max(0, len(frames) + value) if value < 0 else min(value, len(frames))

    if reply.stream_error:
        at = position(reply.stream_error_after)
        at = content_end if at is None else at
        message = reply.error_message or DEFAULT_ERROR_MESSAGES.get(529, "error")
        frames = frames[:at] + [stream_error_frame(wire, message, reply.stream_error, at)]
    malformed_at = position(reply.malformed_sse_after)
    if malformed_at is not None:
        frames.insert(malformed_at, malformed_frame(wire))
    if reply.invalid_utf8:
        frames = [frame.replace("\ufffd".encode(), b"\xff") for frame in frames]
    return Faulted(frames, position(reply.disconnect_after), position(reply.stall_after),
                   position(reply.trickle_after))
