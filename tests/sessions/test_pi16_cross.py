"""Pi session files cross both ways with the real Pi 1.6.0, on all three wires (issue 32).

Each test runs both programs against one fake model server with a ``read`` tool turn: one program starts the
session, the other continues it with ``--session``, then the first continues the other's extended file. Every
continuation keeps the earlier lines byte for byte, and the continuing program's request carries the other's
turns (user, assistant tool call, tool result, assistant text) in the wire's own shape. Skips without Pi 1.6.0
(``.ci/run`` installs it under ``.ci/ref/pi16``; locally set ``PI16_HOME``, e.g. ``/work/ref/pi16``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pi_core import MessageEntry, SessionEntries, UnknownEntry
from pi_core.sessions.jsonfmt import js_dumps, js_loads
from pi_core.sessions.manager import SessionManager
from pi_core.testing.fake_server import Reply
from pi_core.testing.runner import PiRunner, pi_runner
from pi_core.types import AssistantMessage, ToolResultMessage, UserMessage
from tests.providers.pi16 import Pi16, require_pi16

WIRES = ["anthropic-messages", "openai-completions", "openai-responses"]
MODEL = ["--provider", "fake", "--model", "fake-model"]
# The first program's turns, as every later request must carry them.
FIRST = [("user", "first"), ("call", "read", {"path": "a.txt"}), ("result", "A\n"), ("assistant", "one")]

Turn = tuple[Any, ...]


@pytest.fixture
def pi16() -> Pi16:
    return require_pi16()


@pytest.fixture(params=WIRES)
def pi(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[PiRunner]:
    with pi_runner(tmp_path, request.param) as runner:
        (runner.cwd / "a.txt").write_text("A\n")
        yield runner


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content if isinstance(part, dict))


def turns(api: str, body: dict[str, Any]) -> list[Turn]:
    """The conversation a request carries, read in the wire's own shape; a tool result must answer the call
    just before it by that call's id. System prompts are counted apart: at most one per request."""
    found: list[Turn] = []
    calls: list[str] = []
    systems = 0

    def result(call_id: str, text: str) -> None:
        assert calls and call_id == calls[-1], (call_id, calls)
        found.append(("result", text))

    if api == "anthropic-messages":
        systems = 1 if body.get("system") else 0
        for message in body["messages"]:
            blocks = message["content"] if isinstance(message["content"], list) else [
                {"type": "text", "text": message["content"]}]
            for block in blocks:
                if block["type"] == "text" and block["text"]:
                    found.append((message["role"], block["text"]))
                elif block["type"] == "tool_use":
                    calls.append(block["id"])
                    found.append(("call", block["name"], block["input"]))
                elif block["type"] == "tool_result":
                    result(block["tool_use_id"], _text(block["content"]))
    elif api == "openai-completions":
        for message in body["messages"]:
            role = message["role"]
            if role in ("system", "developer"):
                systems += 1
            elif role == "tool":
                result(message["tool_call_id"], _text(message["content"]))
            else:
                if message.get("content"):
                    found.append((role, _text(message["content"])))
                for call in message.get("tool_calls") or []:
                    calls.append(call["id"])
                    found.append(("call", call["function"]["name"], json.loads(call["function"]["arguments"])))
    else:
        for item in body["input"]:
            kind = item.get("type", "message")
            if kind == "function_call":
                calls.append(item["call_id"])
                found.append(("call", item["name"], json.loads(item["arguments"])))
            elif kind == "function_call_output":
                result(item["call_id"], _text(item["output"]))
            elif item["role"] in ("system", "developer"):
                systems += 1
            else:
                found.append((item["role"], _text(item["content"])))
    assert systems <= 1, body
    return found


def pi16_env(pi: PiRunner) -> dict[str, str]:
    home = pi.home.parent / "home"
    home.mkdir(exist_ok=True)
    return {**pi.env(), "HOME": str(home), "PI_OFFLINE": "1", "PI_SKIP_VERSION_CHECK": "1"}


def run_pi16(pi16: Pi16, pi: PiRunner, *args: str) -> str:
    done = pi16.run([*MODEL, *args], pi16_env(pi), timeout=90, cwd=pi.cwd)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def run_ours(pi: PiRunner, *args: str) -> str:
    done = pi.run(*args)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def continued(path: Path, before: bytes) -> bytes:
    after = path.read_bytes()
    assert after.startswith(before) and after.count(b"\n") > before.count(b"\n")
    return after


def assert_pi_reads(path: Path, texts: list[str]) -> None:
    """pi parses the file: every line round-trips byte for byte, every entry is typed, and the branch holds
    the user, tool call, tool result and assistant messages of both programs."""
    for line in path.read_text(encoding="utf-8").splitlines():
        assert js_dumps(js_loads(line)) == line
    entries = SessionEntries(SessionManager.open(path))
    assert not [e for e in entries.get_entries() if isinstance(e, UnknownEntry)]
    messages = [e.message for e in entries.get_branch() if isinstance(e, MessageEntry)]
    assert {UserMessage, AssistantMessage, ToolResultMessage} <= {type(m) for m in messages}
    said = [_text([b.model_dump() for b in m.content]) for m in messages
            if isinstance(m, (UserMessage, AssistantMessage)) and not isinstance(m.content, str)]
    assert [t for t in said if t in texts] == texts


def test_pi_session_continued_by_pi16_then_by_pi(pi16: Pi16, pi: PiRunner) -> None:
    pi.server.add(Reply(tool_calls=[("read", {"path": "a.txt"})]), Reply(text="one"))
    assert run_ours(pi, "-p", "first") == "one"
    [path] = pi.session_files()
    ours = path.read_bytes()

    pi.server.add(Reply(text="two"))
    assert run_pi16(pi16, pi, "--session", str(path), "-p", "second") == "two"
    theirs = continued(path, ours)
    assert len(pi.server.requests) == 3
    assert turns(pi.api, pi.server.requests[2].body) == [*FIRST, ("user", "second")]

    pi.server.add(Reply(text="three"))
    assert run_ours(pi, "--session", str(path), "-p", "third") == "three"
    continued(path, theirs)
    assert turns(pi.api, pi.server.requests[3].body) == [
        *FIRST, ("user", "second"), ("assistant", "two"), ("user", "third")]
    assert_pi_reads(path, ["first", "one", "second", "two", "third", "three"])


def test_pi16_session_continued_by_pi_then_by_pi16(pi16: Pi16, pi: PiRunner) -> None:
    pi.server.add(Reply(tool_calls=[("read", {"path": "a.txt"})]), Reply(text="one"))
    assert run_pi16(pi16, pi, "-p", "first") == "one"
    [path] = pi.session_files()  # Pi 1.6.0 writes under the same agent dir's sessions/
    theirs = path.read_bytes()
    assert_pi_reads(path, ["first", "one"])

    pi.server.add(Reply(text="two"))
    assert run_ours(pi, "--session", str(path), "-p", "second") == "two"
    ours = continued(path, theirs)
    assert len(pi.server.requests) == 3
    assert turns(pi.api, pi.server.requests[2].body) == [*FIRST, ("user", "second")]

    pi.server.add(Reply(text="three"))
    assert run_pi16(pi16, pi, "--session", str(path), "-p", "third") == "three"
    continued(path, ours)
    assert turns(pi.api, pi.server.requests[3].body) == [
        *FIRST, ("user", "second"), ("assistant", "two"), ("user", "third")]
    assert_pi_reads(path, ["first", "one", "second", "two", "third", "three"])
