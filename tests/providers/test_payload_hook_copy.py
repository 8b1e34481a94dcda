"""pi_before_provider_request edits a copy of the body: an in-place edit reaches that request only, while the
wires keep sharing their converted history across turns (every wire, through the CLI and the fake server)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pi_core.testing.fake_script import Reply
from pi_core.testing.runner import pi_runner

# Appends "!" in place to the text of the request's first history message (whatever the wire's shape).
EDITOR = '''
from pi_core import hookimpl

def _first_text(payload):
    for key in ("messages", "input", "contents"):
        items = payload.get(key)
        if items:
            break
    item = next(i for i in items if i.get("role") == "user")
    if isinstance(item.get("content"), str):
        return item, "content"
    parts = item.get("content") or item.get("parts")
    part = parts[0]
    return part, "text"

@hookimpl
def pi_before_provider_request(payload):
    holder, key = _first_text(payload)
    holder[key] = holder[key] + "!"
'''


def _first_text(body: dict) -> str:
    items = next(body[k] for k in ("messages", "input", "contents") if body.get(k))
    item = next(i for i in items if i.get("role") == "user")
    content = item.get("content")
    if isinstance(content, str):
        return content
    return (content or item.get("parts"))[0]["text"]


@pytest.mark.parametrize("api", ["openai-completions", "openai-responses", "anthropic-messages",
                                 "google-generative-ai"])
def test_an_in_place_edit_reaches_its_own_request_and_not_the_next(tmp_path: Path, api: str) -> None:
    with pi_runner(tmp_path, api) as runner:
        (runner.cwd / "tiny.txt").write_text("tiny file\n")
        editor = runner.cwd / "editor.py"
        editor.write_text(EDITOR)
        runner.server.add(*[Reply(tool_calls=[("read", {"path": "tiny.txt"})]) for _ in range(3)], Reply(text="ok"))
        done = runner.run("-e", str(editor), "--no-session", "-p", "go")
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == "ok"
        bodies = [request.body for request in runner.server.requests]
        assert len(bodies) == 4
        assert [_first_text(body) for body in bodies] == ["go!"] * 4  # not "go!!", "go!!!": each edit was a copy's
