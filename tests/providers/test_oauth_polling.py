"""RFC 8628 polling rules of ``pi_core.models.oauth.device.poll_device_flow``, on a virtual clock (no real waits)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from pi_core.models.oauth import OAuthError
from pi_core.models.oauth import device as device_module
from pi_core.models.oauth.device import Poll, poll_device_flow


@pytest.fixture
def slept(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[float]]:
    """Every sleep the poller asks for; time moves on by that much instead of passing."""
    waits: list[float] = []
    clock = [1000.0]

    async def sleep(seconds: float) -> None:
        waits.append(seconds)
        clock[0] += seconds

    monkeypatch.setattr(device_module.asyncio, "sleep", sleep)
    monkeypatch.setattr(device_module.time, "monotonic", lambda: clock[0])
    yield waits


def answers(*polls: Poll):
    queue = list(polls)

    async def poll() -> Poll:
        return queue.pop(0)

    return poll


def test_no_interval_means_five_seconds_and_slow_down_adds_five(slept: list[float]) -> None:
    poll = answers(Poll("pending"), Poll("slow_down"), Poll("complete", "token"))
    assert asyncio.run(poll_device_flow(poll, interval_s=None, expires_in_s=600)) == "token"
    assert slept == [5.0, 5.0, 10.0]


def test_the_servers_interval_is_kept_but_never_below_one_second(slept: list[float]) -> None:
    poll = answers(Poll("pending"), Poll("slow_down", interval_s=7), Poll("complete", "ok"))
    assert asyncio.run(poll_device_flow(poll, interval_s=0.2, expires_in_s=600, wait_first=False)) == "ok"
    assert slept == [1.0, 7.0]


def test_expiry_after_slow_downs_names_the_clock_drift(slept: list[float]) -> None:
    poll = answers(*[Poll("slow_down")] * 10)
    with pytest.raises(OAuthError, match="clock drift"):
        asyncio.run(poll_device_flow(poll, interval_s=5, expires_in_s=30))
    assert sum(slept) == pytest.approx(30)
