"""bookmark: /bookmark labels the last assistant entry in the session file; /unbookmark clears the newest label."""

from __future__ import annotations

import json
from pathlib import Path

from pi_core.testing.fake_script import Reply


def _entries(path: str) -> list[dict]:
    return [json.loads(line) for line in Path(path).read_text().splitlines()[1:]]


def test_bookmark_and_unbookmark_the_last_reply(example, ui) -> None:
    example.server.add(Reply(text="first answer"))
    client = example.rpc("bookmark")
    mark = client.event_count()
    client.prompt("/unbookmark")
    assert ui(client, "notify", after=mark)["message"] == "No bookmarked entry found"
    mark = client.event_count()
    client.prompt("/bookmark v1")
    notice = ui(client, "notify", after=mark)
    assert (notice["message"], notice["notifyType"]) == ("No assistant message to bookmark", "warning")

    client.prompt_and_wait("hello")
    mark = client.event_count()
    client.prompt("/bookmark v1")
    assert ui(client, "notify", after=mark)["message"] == "Bookmarked as: v1"
    session_file = client.get_state()["sessionFile"]
    entries = _entries(session_file)
    reply = next(e for e in entries if e["type"] == "message" and e["message"]["role"] == "assistant")
    labels = [e for e in entries if e["type"] == "label"]
    assert [(e["targetId"], e.get("label")) for e in labels] == [(reply["id"], "v1")]

    mark = client.event_count()
    client.prompt("/unbookmark")
    assert ui(client, "notify", after=mark)["message"] == "Removed bookmark: v1"
    labels = [e for e in _entries(session_file) if e["type"] == "label"]
    assert [(e["targetId"], e.get("label")) for e in labels] == [(reply["id"], "v1"), (reply["id"], None)]
    mark = client.event_count()
    client.prompt("/unbookmark")
    assert ui(client, "notify", after=mark)["message"] == "No bookmarked entry found"

    mark = client.event_count()
    client.prompt("/bookmark")  # no label: a timestamp names it
    message = ui(client, "notify", after=mark)["message"]
    assert message.startswith("Bookmarked as: bookmark-")
    assert message.removeprefix("Bookmarked as: bookmark-").isdigit()
