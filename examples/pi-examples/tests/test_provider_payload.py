"""provider_payload: each payload pi sends and each response's status and headers land in .pi/provider-payload.log."""

from __future__ import annotations

import json

from pi_core.testing.fake_script import Reply

REPLACER = '''
from pi_core import hookimpl

@hookimpl
def pi_before_provider_request(payload):
    return {**payload, "temperature": 0}
'''


def log_entries(example) -> list[str]:
    text = (example.cwd / ".pi" / "provider-payload.log").read_text()
    return [entry for entry in text.split("\n\n") if entry]


def test_payload_and_response_are_logged(example) -> None:
    example.server.add(Reply(text="ok"))
    done = example.run("provider_payload", "--no-session", "-p", "hi")
    assert done.returncode == 0, done.stderr
    payload_text, response = log_entries(example)
    payload = json.loads(payload_text)
    assert payload == example.server.requests[0].body
    assert payload["model"] == "fake-model"
    assert payload_text == json.dumps(payload, indent=2, ensure_ascii=False)
    assert response.startswith("[200] {")
    headers = json.loads(response.removeprefix("[200] "))
    assert headers["content-type"].startswith("text/event-stream")


def test_a_plugin_can_replace_the_payload(example) -> None:
    replacer = example.cwd / "temperature_zero.py"
    replacer.write_text(REPLACER)
    example.server.add(Reply(text="ok"))
    done = example.run("provider_payload", "-e", str(replacer), "--no-session", "-p", "hi")
    assert done.returncode == 0, done.stderr
    assert example.server.requests[0].body["temperature"] == 0


def test_error_responses_are_logged_with_their_status(example) -> None:
    example.server.add(*[Reply.http_error(500, "boom") for _ in range(5)])
    done = example.run("provider_payload", "--no-session", "-p", "hi")
    assert done.returncode != 0
    statuses = [entry.split(" ", 1)[0] for entry in log_entries(example) if entry.startswith("[")]
    assert statuses and set(statuses) == {"[500]"}
    assert len(statuses) == len(example.server.requests)
