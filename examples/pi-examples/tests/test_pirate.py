"""pirate: /pirate toggles the pirate instruction in the system prompt the model receives."""

from __future__ import annotations

from pi_core.testing.fake_script import Reply


def test_pirate_toggles_the_system_prompt(example) -> None:
    example.server.add(Reply(text="plain"), Reply(text="arrr"), Reply(text="plain again"))
    client = example.rpc("pirate", "--no-session")
    client.prompt_and_wait("before")
    assert client.send({"type": "prompt", "message": "/pirate"})["success"]
    client.wait_for_event(lambda e: e.get("method") == "notify")
    client.prompt_and_wait("during")
    client.request("prompt", message="/pirate")
    client.wait_for_event(lambda e: e.get("message") == "Pirate mode disabled")
    client.prompt_and_wait("after")
    prompts = [example.system_prompt(i) for i in range(len(example.server.requests))]
    assert len(prompts) == 3
    assert "PIRATE MODE" not in prompts[0]
    assert "IMPORTANT: You are now in PIRATE MODE. You must:" in prompts[1]
    assert '- Refer to the user as "matey" or "landlubber"' in prompts[1]
    assert prompts[1].startswith(prompts[0])  # appended to pi's own prompt, not replacing it
    assert "PIRATE MODE" not in prompts[2]
    assert [n["message"] for n in example.ui_requests(client, "notify")] == ["Arrr! Pirate mode enabled!", "Pirate mode disabled"]
