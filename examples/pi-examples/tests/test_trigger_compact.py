"""trigger_compact: /trigger-compact compacts now with its instructions; crossing 100k tokens compacts by itself."""

from __future__ import annotations

import json

from pi_core.testing.fake_script import Reply

KEEP_LITTLE = "compaction = { enabled = false, keepRecentTokens = 50 }\n"
# Long enough that keeping the last turn whole keeps more than keepRecentTokens: no split turn.
LONG = "and test it " * 30


def test_command_compacts_with_the_given_instructions(example) -> None:
    (example.home / "settings.toml").write_text(KEEP_LITTLE)
    example.server.add(Reply(text="answer one"), Reply(text="answer two"), Reply(text="the summary"))
    client = example.rpc("trigger_compact", "--no-session")
    client.prompt_and_wait("one")
    client.prompt_and_wait(LONG)
    start = client.event_count()
    client.request("prompt", message="/trigger-compact keep the API notes")
    end = client.wait_for_event("compaction_end", after=start)
    assert end.get("result", {}).get("summary", "").startswith("the summary")
    assert "keep the API notes" in json.dumps(example.server.requests[2].body)
    client.wait_for_event(lambda e: e.get("message") == "Compaction completed")
    assert [n["message"] for n in example.ui_requests(client, "notify")] == [
        "Compaction started", "Compaction completed"]


def test_crossing_the_threshold_compacts_once(example) -> None:
    (example.home / "settings.toml").write_text(KEEP_LITTLE)
    (example.home / "models.json").write_text((example.home / "models.json").read_text().replace(
        '"contextWindow": 100000', '"contextWindow": 400000'))
    example.server.add(Reply(text="small", input_tokens=90_000), Reply(text="big", input_tokens=110_000),
                       Reply(text="auto summary"), Reply(text="bigger", input_tokens=120_000))
    client = example.rpc("trigger_compact", "--no-session")
    client.prompt_and_wait("one")
    assert not [e for e in client.events if e.get("type") == "compaction_start"]
    start = client.event_count()
    client.prompt_and_wait(LONG)
    end = client.wait_for_event("compaction_end", after=start)
    assert end["result"]["summary"].startswith("auto summary")
    client.wait_for_event(lambda e: e.get("message") == "Compaction completed")
    client.prompt_and_wait("three")  # already over the line: no second compaction
    assert len([e for e in client.events if e.get("type") == "compaction_start"]) == 1
    assert len(example.server.requests) == 4
