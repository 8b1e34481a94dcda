"""input_transform: "?quick" rewrites the prompt the model gets; "ping"/"time" are answered without the model."""

from __future__ import annotations

import re

from pi_core.testing.fake_script import Reply


def test_quick_rewrites_and_ping_time_never_reach_the_model(example, ui) -> None:
    example.server.add(Reply(text="X is a thing."), Reply(text="plain"))
    client = example.rpc("input_transform", "--no-session")
    client.prompt_and_wait("?quick What is X?")
    assert example.user_text(0) == "Respond briefly in 1-2 sentences: What is X?"

    for text, expected in (("ping", "pong"), ("PING", "pong")):
        mark = client.event_count()
        client.prompt(text)
        assert ui(client, "notify", after=mark)["message"] == expected
    mark = client.event_count()
    client.prompt("time")
    assert re.fullmatch(r"\d{1,2}/\d{1,2}/\d{4}, \d{1,2}:\d\d:\d\d [AP]M", ui(client, "notify", after=mark)["message"])
    mark = client.event_count()
    client.prompt("?quick   ")
    notice = ui(client, "notify", after=mark)
    assert (notice["message"], notice["notifyType"]) == ("Usage: ?quick <question>", "warning")
    assert len(example.server.requests) == 1

    client.prompt_and_wait("ping me later")  # only the exact word is answered locally
    assert example.user_text(1) == "ping me later"
