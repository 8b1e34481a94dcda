"""confirm_destructive: new/switch/fork over RPC ask first; a "no" vetoes (cancelled: true, session unchanged)."""

from __future__ import annotations

from pi_core.testing.fake_script import Reply


def test_clear_switch_and_fork_are_confirmed(example, ui, background) -> None:
    example.server.add(Reply(text="first"))
    client = example.rpc("confirm_destructive")
    client.prompt_and_wait("hello")
    first = client.get_state()["sessionFile"]

    pending = background(client.new_session)
    ask = ui(client, "confirm")
    assert (ask["title"], ask["message"]) == ("Clear session?", "This will delete all messages in the current session.")
    client.respond_ui(ask["id"], confirmed=False)
    assert pending.result(30) == {"cancelled": True}
    assert ui(client, "notify", message="Clear cancelled")["notifyType"] == "info"
    assert client.get_state()["sessionFile"] == first

    mark = client.event_count()
    pending = background(client.new_session)
    client.respond_ui(ui(client, "confirm", after=mark)["id"], confirmed=True)
    assert pending.result(30) == {"cancelled": False}
    second = client.get_state()["sessionFile"]
    assert second != first

    # The fresh session holds no user message: switching away from it needs no confirmation.
    mark = client.event_count()
    assert client.switch_session(first) == {"cancelled": False}
    assert client.get_state()["sessionFile"] == first
    assert not [e for e in client.events[mark:] if e.get("method") == "confirm"]

    mark = client.event_count()
    pending = background(client.switch_session, second)
    ask = ui(client, "confirm", after=mark)
    assert (ask["title"], ask["message"]) == ("Switch session?",
                                              "You have messages in the current session. Switch anyway?")
    client.respond_ui(ask["id"], confirmed=False)
    assert pending.result(30) == {"cancelled": True}
    ui(client, "notify", after=mark, message="Switch cancelled")
    assert client.get_state()["sessionFile"] == first

    entry_id = client.get_fork_messages()[0]["entryId"]
    mark = client.event_count()
    pending = background(client.fork, entry_id)
    ask = ui(client, "select", after=mark)
    assert ask["title"] == f"Fork from entry {entry_id[:8]}?"
    assert ask["options"] == ["Yes, create fork", "No, stay in current session"]
    client.respond_ui(ask["id"], value="No, stay in current session")
    assert pending.result(30)["cancelled"] is True
    ui(client, "notify", after=mark, message="Fork cancelled")
    assert client.get_state()["sessionFile"] == first

    mark = client.event_count()
    pending = background(client.fork, entry_id)
    client.respond_ui(ui(client, "select", after=mark)["id"], value="Yes, create fork")
    assert pending.result(30)["cancelled"] is False
    assert client.get_state()["sessionFile"] not in (first, second)


def test_without_a_ui_nothing_is_asked_or_vetoed(example, fresh_command) -> None:
    done = example.run("confirm_destructive", "-e", str(fresh_command), "--no-session", "-p", "/fresh")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "replaced"
