"""hello: the model calls the tool and reads the greeting; the pack enables nothing until asked."""

from __future__ import annotations

import json

from pi_core.testing.fake_script import Reply


def test_the_model_calls_hello_and_reads_the_greeting(example) -> None:
    example.server.add(Reply(tool_calls=[("hello", {"name": "Ada"})]), Reply(text="done"))
    done = example.run("hello", "--no-session", "--mode", "json", "greet Ada")
    assert done.returncode == 0, done.stderr
    sent = [t["name"] for t in example.server.requests[0].body["tools"]]
    assert "hello" in sent
    tool_result = example.server.requests[1].body["messages"][-1]["content"][0]
    assert tool_result["type"] == "tool_result" and "Hello, Ada!" in json.dumps(tool_result["content"])
    ends = [json.loads(line) for line in done.stdout.splitlines() if '"tool_execution_end"' in line]
    assert ends[0]["result"]["details"] == {"greeted": "Ada"}


def test_installed_but_off_until_enabled(example) -> None:
    example.server.add(Reply(text="hi"))
    done = example.run(None, "--no-session", "-p", "hi")
    assert done.returncode == 0, done.stderr
    assert "hello" not in [t["name"] for t in example.server.requests[0].body["tools"]]


def test_pi_plugins_lists_the_pack_as_available_until_enabled(example) -> None:
    off = example.run(None, "plugins", "--json")
    assert off.returncode == 0, off.stderr
    rows = {row["name"]: row for row in json.loads(off.stdout)}
    assert rows["hello"]["layer"] == "available" and rows["hello"]["tools"] == []
    assert rows["permission_gate"]["layer"] == "available"
    text = example.run(None, "plugins").stdout
    assert "Available, off until enabled (-e plugin:NAME, or the enabledPlugins setting)" in text
    assert "hello, " in text.split("Available, off until enabled")[1]

    on = example.run("hello", "plugins", "--json")
    rows = {row["name"]: row for row in json.loads(on.stdout)}
    assert rows["hello"]["layer"] != "available" and rows["hello"]["tools"] == ["hello"]
    assert rows["permission_gate"]["layer"] == "available"
