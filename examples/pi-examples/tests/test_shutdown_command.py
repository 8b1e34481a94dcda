"""shutdown_command: a tool or /quit asks pi to end; pi finishes the reply first, then exits cleanly."""

from __future__ import annotations

from pi_core.testing.fake_script import Reply


def test_a_tool_ends_rpc_mode_after_the_reply(example) -> None:
    example.server.add(Reply(tool_calls=[("finish_and_exit", {})]), Reply(text="All done, bye"))
    client = example.rpc("shutdown_command", "--no-session")
    client.request("prompt", message="finish up")
    assert client.wait(timeout=30) == 0
    assert example.tool_results(1) == ["Shutdown requested. Exiting after this response."]
    assert len(example.server.requests) == 2  # the model still answered the tool result
    assert any(e.get("type") == "agent_end" for e in client.events)


def test_deploy_streams_its_progress_then_exits(example) -> None:
    example.server.add(Reply(tool_calls=[("deploy_and_exit", {"environment": "prod"})]), Reply(text="deployed"))
    client = example.rpc("shutdown_command", "--no-session")
    client.request("prompt", message="deploy")
    assert client.wait(timeout=30) == 0
    updates = [e for e in client.events if e.get("type") == "tool_execution_update"]
    texts = [e["partialResult"]["content"][0]["text"] for e in updates]
    assert texts == ["Deploying to prod...", "Deployment complete, exiting..."]
    assert example.tool_results(1) == ["Done! Shutdown requested."]


def test_quit_command_over_rpc(example) -> None:
    client = example.rpc("shutdown_command", "--no-session")
    client.request("prompt", message="/quit")
    assert client.wait(timeout=30) == 0


def test_print_mode_runs_to_the_end(example) -> None:
    example.server.add(Reply(tool_calls=[("finish_and_exit", {})]), Reply(text="bye now"))
    done = example.run("shutdown_command", "--no-session", "-p", "finish")
    assert done.returncode == 0, done.stderr
    assert "bye now" in done.stdout
