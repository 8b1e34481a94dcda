"""RpcClient behaviour that programs rely on: a broken listener, writing after close, id-less errors."""

from __future__ import annotations

import pytest

from pi_core.modes.rpc.client import RpcClosed
from pi_core.testing.fake_provider import reply
from tests.rpc.conftest import Rig


def test_a_raising_listener_does_not_stop_the_client(rig: Rig, capsys: pytest.CaptureFixture[str]) -> None:
    client = rig.start(reply("still here"))

    def broken(event: dict) -> None:
        raise ValueError("listener bug")

    client.on_event(broken)
    client.prompt_and_wait("hi")
    assert client.get_last_assistant_text() == "still here"
    assert "listener bug" in capsys.readouterr().err


def test_unsubscribed_listener_gets_nothing(rig: Rig) -> None:
    client = rig.start(reply("a"))
    seen: list[str] = []
    unsubscribe = client.on_event(lambda e: seen.append(e["type"]))
    unsubscribe()
    client.prompt_and_wait("hi")
    assert seen == []


def test_writing_after_close_raises_rpc_closed(rig: Rig) -> None:
    client = rig.start()
    client.close_stdin()
    with pytest.raises(RpcClosed, match="cannot write to pi"):
        client.get_state()


def test_history_limit_keeps_indices_valid(rig: Rig) -> None:
    client = rig.start(reply("one"), reply("two"))
    client.history = 5
    client.prompt_and_wait("first")
    count = client.event_count()
    assert count > 5 and len(client.events) == 5 and len(client.received) <= 5
    events = client.prompt_and_wait("second")
    assert events[-1]["type"] == "agent_end" and client.event_count() > count
    assert client.get_last_assistant_text() == "two"
