"""rpc_demo: every RPC extension-UI method, played from the client's side as Pi's rpc-extension-ui client does."""

from __future__ import annotations

from pi_core.testing.fake_script import Reply


def _statuses(example, client) -> list[str]:
    return [e["statusText"] for e in example.ui_requests(client, "setStatus") if e["statusKey"] == "rpc-demo"]


def test_lifecycle_statuses_and_the_dangerous_command_select(example, ui) -> None:
    (example.cwd / "x").mkdir()
    example.server.add(Reply(tool_calls=[("bash", {"command": "rm -rf x"})]), Reply(text="ok"))
    client = example.rpc("rpc_demo", "--no-session")
    assert ui(client, "setTitle")["title"] == "pi RPC Demo"
    widget = ui(client, "setWidget")
    assert (widget["widgetKey"], widget["widgetLines"]) == ("rpc-demo", ["--- RPC Extension UI Demo ---",
                                                                        "Loaded and ready."])
    assert ui(client, "setStatus")["statusText"] == "Turns: 0"

    client.prompt("clean")
    ask = ui(client, "select")
    assert (ask["title"], ask["options"]) == ("Dangerous command: rm -rf x", ["Allow", "Block"])
    client.respond_ui(ask["id"], value="Block")
    assert ui(client, "notify", message="Command blocked by user")["notifyType"] == "warning"
    client.wait_for_event("agent_end", timeout=30)
    assert example.tool_results(1) == ["Blocked by user"]
    assert (example.cwd / "x").is_dir()
    assert _statuses(example, client) == ["Turns: 0", "Turn 1 running...", "Turn 1 done", "Turn 2 running...",
                                          "Turn 2 done"]


def test_input_editor_prefill_and_clear_confirmation(example, ui, background) -> None:
    client = example.rpc("rpc_demo", "--no-session")
    pending = background(client.prompt, "/rpc-input")
    ask = ui(client, "input")
    assert (ask["title"], ask["placeholder"]) == ("Enter a value", "type something...")
    client.respond_ui(ask["id"], value="v")
    pending.result(30)
    ui(client, "notify", message="You entered: v")
    mark = client.event_count()
    pending = background(client.prompt, "/rpc-input")
    client.respond_ui(ui(client, "input", after=mark)["id"], cancelled=True)
    pending.result(30)
    ui(client, "notify", after=mark, message="Input cancelled")

    pending = background(client.prompt, "/rpc-editor")
    ask = ui(client, "editor")
    assert (ask["title"], ask["prefill"]) == ("Edit some text", "Line 1\nLine 2\nLine 3")
    client.respond_ui(ask["id"], value="first\nsecond")
    pending.result(30)
    ui(client, "notify", message="Editor submitted (2 lines)")

    client.prompt("/rpc-prefill")
    assert ui(client, "set_editor_text")["text"] == "This text was set by the rpc-demo extension."
    ui(client, "notify", message="Editor prefilled")

    pending = background(client.new_session)
    ask = ui(client, "confirm")
    assert (ask["title"], ask["message"]) == ("Clear session?", "All messages will be lost.")
    client.respond_ui(ask["id"], confirmed=False)
    assert pending.result(30) == {"cancelled": True}
    ui(client, "notify", message="Clear cancelled")
    mark = client.event_count()
    pending = background(client.new_session)
    client.respond_ui(ui(client, "confirm", after=mark)["id"], confirmed=True)
    assert pending.result(30) == {"cancelled": False}
    assert ui(client, "setTitle", after=mark)["title"] == "pi RPC Demo (new session)"
    assert not example.server.requests


def test_print_mode_blocks_dangerous_commands(example) -> None:
    (example.cwd / "x").mkdir()
    example.server.add(Reply(tool_calls=[("bash", {"command": "sudo rm x"})]), Reply(text="ok"))
    done = example.run("rpc_demo", "--no-session", "-p", "clean")
    assert done.returncode == 0, done.stderr
    assert example.tool_results(1) == ["Dangerous command blocked (no UI)"]
