"""Polling for a device-code sign-in (RFC 8628): wait the interval, ask, slow down when told to, give up at expiry."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal

from pi_core.models.oauth import OAuthError

MINIMUM_INTERVAL_S = 1.0
DEFAULT_INTERVAL_S = 5.0  # RFC 8628 §3.2: no interval given means 5 seconds
SLOW_DOWN_STEP_S = 5.0  # RFC 8628 §3.5
TIMED_OUT = "Device flow timed out"
TIMED_OUT_SLOW = ("Device flow timed out after one or more slow_down responses. This is often caused by clock "
                  "drift in WSL or VM environments. Please sync or restart the VM clock and try again.")


@dataclass
class Poll:
    """One answer of the token endpoint: ``complete`` (with ``value``), ``pending``, ``slow_down`` or ``failed``."""

    status: Literal["complete", "pending", "slow_down", "failed"]
    value: Any = None  # open: what the token endpoint answered, as the sign-in flow reads it (JSON or parts of it)
    message: str = ""
    interval_s: float | None = None



def still_waiting(body: dict[str, Any]) -> Poll | None:  # open: the OAuth server's JSON answer
    """``pending`` or ``slow_down`` (with the interval the server asks for) when a token answer's ``error`` says
    the user has not decided yet (RFC 8628 §3.5); None for any other answer."""
    error = body.get("error")
    if error == "authorization_pending":
        return Poll("pending")
    if error == "slow_down":
        interval = body.get("interval")
        return Poll("slow_down", interval_s=float(interval) if isinstance(interval, (int, float)) else None)
    return None

async def poll_device_flow(poll: Callable[[], Awaitable[Poll]], *, interval_s: float | None,
                           expires_in_s: float | None, wait_first: bool = True) -> Any:  # open: the answer (Poll.value)
    """Call ``poll`` until it completes; raises OAuthError when it fails or the code expires."""
    deadline = time.monotonic() + expires_in_s if expires_in_s else float("inf")
    interval = max(MINIMUM_INTERVAL_S, interval_s if interval_s is not None else DEFAULT_INTERVAL_S)
    slowed = False
    if wait_first:
        await asyncio.sleep(min(interval, max(0.0, deadline - time.monotonic())))
    while time.monotonic() < deadline:
        result = await poll()
        if result.status == "complete":
            return result.value
        if result.status == "failed":
            raise OAuthError(result.message)
        if result.status == "slow_down":
            slowed = True
            # Trust the interval the server now asks for; otherwise add five seconds.
            interval = max(MINIMUM_INTERVAL_S, result.interval_s) if result.interval_s else interval + SLOW_DOWN_STEP_S
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            break
        await asyncio.sleep(min(interval, remaining))
    raise OAuthError(TIMED_OUT_SLOW if slowed else TIMED_OUT)
