"""custom_provider_anthropic: ``custom-anthropic/claude-sonnet-4-5`` streams through the plugin's own wire
(API id ``custom-anthropic-api``) to a fake Anthropic endpoint with the key from CUSTOM_ANTHROPIC_API_KEY,
and a tool-call round trip works."""

from __future__ import annotations

from pi_examples.custom_provider_anthropic.stream import BETAS

from pi_core.testing.fake_script import Reply


def test_the_custom_api_streams_and_round_trips_a_tool_call(example) -> None:
    (example.cwd / "notes.txt").write_text("remember the milk\n")
    example.server.add(Reply(tool_calls=[("read", {"path": "notes.txt"})]), Reply(text="You must buy milk."))
    env = {"CUSTOM_ANTHROPIC_API_KEY": "k-custom", "CUSTOM_ANTHROPIC_BASE_URL":
           example.server.base_url_for("anthropic-messages")}
    done = example.run("custom_provider_anthropic", "--no-session", "-p", "--provider", "custom-anthropic",
                       "--model", "claude-sonnet-4-5", "what do the notes say?", env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "You must buy milk."
    first, second = example.server.requests
    assert first.path.endswith("/v1/messages") and first.headers.get("x-api-key") == "k-custom"
    assert first.headers.get("anthropic-beta") == BETAS, "sent by the plugin's own wire, not pi's"
    assert first.body["model"] == "claude-sonnet-4-5" and first.body["stream"] is True
    assert first.body["max_tokens"] == 64000 // 3
    assert "read" in [tool["name"] for tool in first.body["tools"]]
    assert "remember the milk" in example.tool_results(1)[0]
    assert second.body["messages"][-2]["content"][0]["type"] == "tool_use"


def test_both_models_are_listed(example) -> None:
    done = example.run("custom_provider_anthropic", "--list-models", "custom-anthropic")
    assert done.returncode == 0, done.stderr
    assert "claude-opus-4-5" in done.stdout and "claude-sonnet-4-5" in done.stdout
