"""timed_confirm: dialogs carry their timeout in milliseconds over RPC and close by themselves when nobody answers."""

from __future__ import annotations

import time

import pytest


def test_timed_confirm_expires_and_select_is_answered(example, ui, background) -> None:
    client = example.rpc("timed_confirm", "--no-session")
    started = time.monotonic()
    pending = background(client.prompt, "/timed")
    ask = ui(client, "confirm")
    assert (ask["title"], ask["message"], ask["timeout"]) == (
        "Timed Confirmation", "This dialog will auto-cancel in 5 seconds. Confirm?", 5000)
    assert ui(client, "notify", message="Cancelled or timed out")  # nobody answered
    pending.result(30)
    assert time.monotonic() - started >= 4.5

    pending = background(client.prompt, "/timed-select")
    ask = ui(client, "select")
    assert (ask["title"], ask["options"], ask["timeout"]) == ("Pick an option", ["Option A", "Option B", "Option C"],
                                                             10000)
    client.respond_ui(ask["id"], value="Option B")
    pending.result(30)
    ui(client, "notify", message="Selected: Option B")

    mark = client.event_count()
    pending = background(client.prompt, "/timed")
    client.respond_ui(ui(client, "confirm", after=mark)["id"], confirmed=True)
    pending.result(30)
    ui(client, "notify", after=mark, message="Confirmed by user!")


def test_timed_signal_dialog_answered_by_the_user(example, ui, background) -> None:
    client = example.rpc("timed_confirm", "--no-session")
    pending = background(client.prompt, "/timed-signal")
    ui(client, "notify", message="Dialog will auto-cancel in 5 seconds...")
    ask = ui(client, "confirm")
    assert "timeout" not in ask  # a signal, not a timeout, closes this one
    client.respond_ui(ask["id"], confirmed=False)
    pending.result(30)
    ui(client, "notify", message="Cancelled by user")


@pytest.mark.slow
def test_timed_signal_closes_the_dialog_after_five_seconds(example, ui, background) -> None:
    client = example.rpc("timed_confirm", "--no-session")
    pending = background(client.prompt, "/timed-signal")
    ui(client, "confirm")
    assert ui(client, "notify", message="Dialog timed out (auto-cancelled)")["notifyType"] == "warning"
    pending.result(30)
