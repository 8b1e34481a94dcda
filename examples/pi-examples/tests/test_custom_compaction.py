"""custom_compaction: /compact is answered by Gemini Flash summarising everything, stored as the plugin's summary."""

from __future__ import annotations

import json

from pi_core.testing.fake_script import Reply

KEEP_LITTLE = "compaction = { enabled = true, reserveTokens = 20000, keepRecentTokens = 50 }\n"
# Long enough that keeping the last turn whole keeps more than keepRecentTokens: no split turn.
LONG = "and test it " * 30


def add_gemini(example) -> None:
    models = json.loads((example.home / "models.json").read_text())
    models["providers"]["google"] = {
        "baseUrl": example.server.base_url_for("google-generative-ai"), "api": "google-generative-ai",
        "apiKey": "test-key", "models": [{"id": "gemini-2.5-flash", "name": "Gemini 2.5 Flash",
                                          "contextWindow": 1000000, "maxTokens": 65536}]}
    (example.home / "models.json").write_text(json.dumps(models))


def entries(path: str) -> list[dict]:
    with open(path, encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


def test_compact_uses_the_flash_model_and_stores_its_summary(example) -> None:
    add_gemini(example)
    (example.home / "settings.toml").write_text(KEEP_LITTLE)
    example.server.add(Reply(text="first answer"), Reply(text="second answer"),
                       Reply(text="## Goals\nShip the parser.", input_tokens=1234, output_tokens=56))
    client = example.rpc("custom_compaction")
    client.prompt_and_wait("write a parser")
    client.prompt_and_wait(LONG)
    result = client.compact()
    assert result["summary"] == "## Goals\nShip the parser."
    summariser = example.server.requests[2]
    assert summariser.wire == "google-generative-ai" and "gemini-2.5-flash" in summariser.path
    text = json.dumps(summariser.body)
    assert "You are a conversation summarizer. Create a comprehensive summary" in text
    assert "<conversation>\\n[User]: write a parser\\n\\n[Assistant]: first answer" in text
    assert "and test it" not in text  # the last turn is kept as it is
    compaction = [e for e in entries(client.get_state()["sessionFile"]) if e["type"] == "compaction"][-1]
    assert compaction["summary"] == "## Goals\nShip the parser." and compaction["fromHook"] is True
    assert compaction["usage"]["input"] == 1234 and compaction["usage"]["output"] == 56
    assert client.get_session_stats()["tokens"]["input"] >= 1234 + 10
    notes = [n["message"] for n in example.ui_requests(client, "notify")]
    assert notes[0] == "Custom compaction extension triggered"
    assert notes[1].startswith("Custom compaction: summarizing ") and notes[1].endswith(
        " tokens) with gemini-2.5-flash...")


def test_when_the_flash_call_fails_pi_summarises_itself(example) -> None:
    (example.home / "settings.toml").write_text(KEEP_LITTLE)  # the catalog has gemini-2.5-flash, but no key
    example.server.add(Reply(text="first answer"), Reply(text="second answer"),
                       Reply(text="pi's own summary", input_tokens=777))
    client = example.rpc("custom_compaction")
    client.prompt_and_wait("write a parser")
    client.prompt_and_wait(LONG)
    assert client.compact()["summary"].startswith("pi's own summary")
    assert example.server.requests[2].wire == "anthropic-messages"
    compaction = [e for e in entries(client.get_state()["sessionFile"]) if e["type"] == "compaction"][-1]
    assert not compaction.get("fromHook")
    assert compaction["usage"]["input"] == 777  # pi's own summary call is on the books too
    notes = [n["message"] for n in example.ui_requests(client, "notify")]
    assert notes[0] == "Custom compaction extension triggered"
    assert notes[2].startswith("Compaction failed: No API key for provider: google.")
