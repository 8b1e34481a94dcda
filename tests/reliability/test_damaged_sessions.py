"""Session files that are old or damaged (issue 17 items 9, 10 and 11's double warning), through ``pi -c``:
the best context the file allows, one warning per problem naming file and line, a backup before a rewrite."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from pi_core.testing.fake_server import Reply
from pi_core.testing.runner import PiRunner, pi_runner

from .conftest import ALL_WIRES, FAST_WIRE

# Repairing the file and dropping the tool result that lost its call happen before any wire
# (pi_core/sessions/context.py; tests/sessions/test_context.py::test_a_tool_result_whose_call_is_missing_is_dropped),
# and each wire's conversion of a tool-call history has its own provider tests: the default run uses the fast
# wire, PI_SLOW_TESTS=1 repeats it on every wire.
WIRES = [wire if wire == FAST_WIRE else pytest.param(wire, marks=pytest.mark.slow) for wire in ALL_WIRES]


def build(pi: PiRunner) -> Path:
    """Three prompts, the second with a tool call: first/one, second/read/two, third/three."""
    (pi.cwd / "a.txt").write_text("A\n")
    pi.server.add(Reply(text="one"))
    assert pi.run("-p", "first").returncode == 0
    pi.server.add(Reply(tool_calls=[("read", {"path": "a.txt"})]), Reply(text="two"))
    assert pi.run("-c", "-p", "second").returncode == 0
    pi.server.add(Reply(text="three"))
    assert pi.run("-c", "-p", "third").returncode == 0
    (path,) = pi.session_files()
    return path


def texts(pi: PiRunner) -> str:
    return json.dumps(pi.server.requests[-1].body)


def continue_once(pi: PiRunner) -> tuple[str, list[str]]:
    pi.server.add(Reply(text="four"))
    done = pi.run("-c", "-p", "fourth")
    assert done.returncode == 0 and done.stdout == "four\n", done.stderr
    assert "Traceback" not in done.stderr
    return done.stderr, done.stderr.splitlines()


@pytest.fixture(params=WIRES)
def wire(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[PiRunner]:
    with pi_runner(tmp_path, request.param) as runner:
        yield runner


def test_an_unreadable_middle_line_keeps_the_history_before_it(wire: PiRunner) -> None:
    path = build(wire)
    lines = path.read_text().split("\n")
    bad = next(i for i, line in enumerate(lines) if '"toolCall"' in line)
    lines[bad] = lines[bad][:60]  # the assistant message holding the tool call, cut off
    path.write_text("\n".join(lines))
    _, warnings = continue_once(wire)
    expected = (f"Warning: Skipped an unreadable line in {path} (line {bad + 1}); the entries after it "
                f"now follow the one before it (line {bad})")
    assert warnings == [expected]  # once, not twice
    sent = texts(wire)
    for kept in ("first", "one", "second", "two", "third", "three", "fourth"):
        assert kept in sent, kept
    # the tool result lost its call with the bad line: it must not be sent (every API refuses one)
    assert "A\\n" not in sent.replace("fourth", "")
    body = wire.server.requests[-1].body
    turns = [m for m in (body.get("messages") or body.get("contents") or body.get("input"))
             if m.get("role") not in ("system", "developer")]
    assert "first" in json.dumps(turns[0])  # the context starts where the session started


def test_a_dangling_parent_and_a_repeated_id_are_relinked(tmp_path: Path) -> None:
    with pi_runner(tmp_path, "google-generative-ai") as pi:
        path = build(pi)
        entries = [json.loads(line) for line in path.read_text().splitlines()]
        users = [e for e in entries if e.get("message", {}).get("role") == "user"]
        third = next(e for e in users if "third" in json.dumps(e))
        third["parentId"] = "deadbeef"  # its parent is not in the file
        second = next(e for e in users if "second" in json.dumps(e))
        second_id = second["id"]
        second["id"] = users[0]["id"]  # a repeated id
        for entry in entries:
            if entry.get("parentId") == second_id:
                entry["parentId"] = users[0]["id"]  # the file's own references follow the newest
        written = "".join(json.dumps(e) + "\n" for e in entries)
        path.write_text(written)
        line_of = {e.get("id"): n + 1 for n, e in enumerate(entries)}
        _, warnings = continue_once(pi)
        assert len(warnings) == 2, warnings
        assert warnings[0].startswith(f"Warning: Entry id {users[0]['id']} in {path} (line ")
        assert "repeats an earlier entry's; both are kept" in warnings[0]
        assert warnings[1].startswith(f"Warning: Entry {third['id']} in {path} (line {line_of[third['id']]}) names a "
                                      "parent that is not in the file (deadbeef)")
        sent = texts(pi)
        for kept in ("first", "one", "second", "two", "third", "three", "fourth"):
            assert kept in sent, kept
        assert path.read_text().startswith(written)  # repaired in memory; the file is only appended to


def test_migrating_an_old_session_keeps_a_backup_and_says_where(tmp_path: Path) -> None:
    with pi_runner(tmp_path, "google-generative-ai") as pi:
        folder = pi.home / "sessions" / "old"
        folder.mkdir(parents=True)
        old = folder / "2024-01-01T00-00-00-000Z_old.jsonl"
        header = {"type": "session", "id": "old-session", "timestamp": "2024-01-01T00:00:00.000Z",
                  "cwd": str(pi.cwd)}
        user = {"type": "message", "timestamp": "2024-01-01T00:00:01.000Z",
                "message": {"role": "user", "content": "remember the milk", "timestamp": 1}}
        reply = {"type": "message", "timestamp": "2024-01-01T00:00:02.000Z",
                 "message": {"role": "assistant", "content": [{"type": "text", "text": "noted"}],
                             "api": "google-generative-ai", "provider": "fake", "model": "fake-model",
                             "usage": {"input": 1, "output": 1}, "stopReason": "stop", "timestamp": 2}}
        original = "\n".join([json.dumps(header), json.dumps(user), '{"type": "message", broken', json.dumps(reply)])
        old.write_text(original + "\n")
        pi.server.add(Reply(text="ok"))
        done = pi.run("--session", str(old), "-p", "what did I say?")
        assert done.returncode == 0, done.stderr
        backups = list(folder.glob("*.bak"))
        assert len(backups) == 1 and backups[0].name.startswith(old.name + ".v1-")
        assert backups[0].read_text() == original + "\n"  # every byte, the unreadable line too
        assert f"Warning: Migrated {old} from session version 1; the original is kept as {backups[0]}" in done.stderr
        assert "remember the milk" in texts(pi)
        assert '"version":3' in old.read_text().split("\n")[0]
