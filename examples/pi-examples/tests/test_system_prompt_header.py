"""system_prompt_header: when a run starts the status shows the length of the system prompt sent."""

from __future__ import annotations

from pi_core.testing.fake_script import Reply


def test_status_shows_the_system_prompt_length(example) -> None:
    example.server.add(Reply(text="ok"))
    (example.cwd / "AGENTS.md").write_text("Ünïcode rules 🏴‍☠️ apply.\n")
    client = example.rpc("system_prompt_header", "--no-session")
    client.prompt_and_wait("hi")
    statuses = example.ui_requests(client, "setStatus")
    sent = example.system_prompt(0)
    assert statuses[0]["statusKey"] == "system-prompt"
    assert statuses[0]["statusText"] == f"System: {len(sent.encode('utf-16-le')) // 2} chars"
    assert len(sent) > 1000
