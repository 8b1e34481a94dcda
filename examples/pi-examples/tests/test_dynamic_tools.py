"""dynamic_tools: echo_session exists from the start; /add-echo-tool adds more that the model can call."""

from __future__ import annotations

from pi_core.testing.fake_script import Reply


def tool_names(example, request: int) -> list[str]:
    return [t["name"] for t in example.server.requests[request].body["tools"]]


def test_tools_added_at_start_and_by_command_reach_the_model(example) -> None:
    example.server.add(Reply(text="hi"), Reply(tool_calls=[("shout", {"message": "hi"})]), Reply(text="done"))
    client = example.rpc("dynamic_tools", "--no-session")
    client.prompt_and_wait("first")
    assert "echo_session" in tool_names(example, 0)
    prompt = example.system_prompt(0)
    assert "- echo_session: Echo back user-provided text with [session] prefix" in prompt
    assert "Use echo_session when the user asks for exact echo output." in prompt
    for command in ("/add-echo-tool Shout", "/add-echo-tool shout", "/add-echo-tool bad-name!", "/add-echo-tool"):
        client.request("prompt", message=command)
    client.wait_for_event(lambda e: e.get("message") == "Usage: /add-echo-tool <tool_name> (lowercase, numbers, "
                                                       "underscores)")
    client.prompt_and_wait("second")
    assert {"echo_session", "shout"} <= set(tool_names(example, 1))
    assert "- shout: Echo back user-provided text with [shout] prefix" in example.system_prompt(1)
    assert example.tool_results(2) == ["[shout] hi"]
    notes = [(n["message"], n.get("notifyType")) for n in example.ui_requests(client, "notify")]
    usage = ("Usage: /add-echo-tool <tool_name> (lowercase, numbers, underscores)", "warning")
    assert notes == [("Registered dynamic tool: echo_session", "info"), ("Registered dynamic tool: shout", "info"),
                     ("Tool already registered: shout", "warning"), usage, usage]
